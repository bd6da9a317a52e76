package restore

import (
	"context"
	"fmt"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// entry restores one non-directory entry as name in the directory node
// dir, open at fd; regular files go to the workers.
func (t *treeRestore) entry(ctx context.Context, e *pxar.Entry, name string, dir *dirNode, fd int, files *fileQueue) error {
	if err := t.entryErr(ctx, e, name, dir, fd, files); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if e.Kind == pxar.KindFile && e.Hardlink == "" {
			t.fileFailed(e.ID)
		}
		t.fail(dir.path(name), err)
	}
	return nil
}

// entryErr is entry with its failure returned.
func (t *treeRestore) entryErr(ctx context.Context, e *pxar.Entry, name string, dir *dirNode, fd int, files *fileQueue) error {
	if err := checkName(name); err != nil {
		return err
	}
	if e.Kind == pxar.KindDir {
		return fmt.Errorf("a directory cannot be restored as a single entry") // Tree gives directories to dirEntries
	}
	if t.opt.Overwrite {
		if err := removeAt(fd, name); err != nil {
			return err
		}
	}
	var ifmt uint32
	var err error
	switch e.Kind {
	case pxar.KindFile:
		if e.Hardlink != "" {
			return t.hardlink(ctx, e, name, dir, fd, files)
		}
		return t.createFile(ctx, e, name, dir, fd, files)
	case pxar.KindSymlink:
		ifmt, err = unix.S_IFLNK, unix.Symlinkat(e.Target, fd, name)
	case pxar.KindDevice:
		ifmt = uint32(e.Metadata.Stat.Mode) & unix.S_IFMT
		if ifmt != unix.S_IFCHR && ifmt != unix.S_IFBLK {
			return fmt.Errorf("device of mode %o", e.Metadata.Stat.Mode)
		}
		err = unix.Mknodat(fd, name, ifmt|0o600, int(e.Device.Dev()))
	case pxar.KindFIFO:
		ifmt, err = unix.S_IFIFO, unix.Mknodat(fd, name, unix.S_IFIFO|0o600, 0)
	case pxar.KindSocket:
		ifmt, err = unix.S_IFSOCK, unix.Mknodat(fd, name, unix.S_IFSOCK|0o600, 0)
	default:
		return fmt.Errorf("unknown entry kind %v", e.Kind)
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", e.Kind, err)
	}
	t.count(func(r *TreeReport) { r.Others++ })
	return t.handleMeta(fd, name, ifmt, &e.Metadata)
}

// createFile creates a regular file and queues it for its content.
func (t *treeRestore) createFile(ctx context.Context, e *pxar.Entry, name string, dir *dirNode, fd int, files *fileQueue) error {
	ffd, err := createAt(fd, name, e.Metadata.Stat.Mode)
	if err != nil {
		return err
	}
	if t.single.name != "" && dir == t.root && name == t.single.name {
		t.madeSingle(ffd)
	}
	return files.push(ctx, fileJob{e: e, dir: dir, name: name, fd: ffd})
}

// handleMeta sets the metadata of the node name in fd that the restore
// just made (a symbolic link, device, FIFO or socket): through an O_PATH
// handle of it, checked to be that node, never through a path.
func (t *treeRestore) handleMeta(fd int, name string, ifmt uint32, m *pxar.Metadata) error {
	h, st, err := openHandle(fd, name, ifmt)
	if err != nil {
		return err
	}
	defer unix.Close(h)
	return t.applyMeta(handleOps(h, st, ifmt == unix.S_IFLNK, fd, name), m, ifmt == unix.S_IFLNK)
}

// dirMeta sets a directory's metadata through its descriptor, once all
// its entries exist (so that creating them changes neither its times nor
// needs a mode that permits it). Workers may still be writing contents
// into its files: that changes neither.
func (t *treeRestore) dirMeta(fd int, node *dirNode, m *pxar.Metadata) {
	if err := t.applyMeta(fdOps(fd), m, false); err != nil {
		t.fail(node.path(""), err)
	}
}

func (t *treeRestore) fileFailed(id uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.failedFiles == nil {
		t.failedFiles = make(map[uint64]bool)
	}
	t.failedFiles[id] = true
}
