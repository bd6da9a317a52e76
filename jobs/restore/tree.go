package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// ErrPartial is returned when some paths of a tree could not be restored.
var ErrPartial = errors.New("some paths were not restored")

// PathError is one path that failed to restore.
type PathError struct {
	Path string `json:"path"`
	Err  string `json:"error"`
}

// TreeOptions tune a file archive restore.
type TreeOptions struct {
	Threads   int     // content workers; default runtime.NumCPU()
	Overwrite bool    // replace what exists at the target
	Owners    bool    // restore owners (needs root); default: when root
	Filter    *Filter // nil: everything
	Stats     *Stats
	// Logger, at debug level, names each entry as the walk restores it
	// (the command's -vv); nil logs nothing.
	Logger *slog.Logger
}

// TreeReport is what a tree restore did.
type TreeReport struct {
	Files, Dirs, Others int64
	Bytes, ZeroBytes    int64
	Failed              []PathError
	// Interrupted restores (the context ended): the target path of the
	// entry the walk had reached, and the marker file left in the target
	// directory ("" if none could be written).
	StoppedAt, Marker string
	// Removed: an interrupted single-file restore removed the partial
	// file it had made at the target.
	Removed bool
}

// maxFailures bounds the failures a report lists (the count goes on).
const maxFailures = 1000

// Tree restores the subtree at start (whose path in the archive is
// startPath, "" for the root) of acc into target, a directory that must
// not exist or be empty (unless Overwrite). Metadata is restored as far as
// the file system allows; contents are fetched by a pool of workers, and
// all-zero blocks stay holes. Everything below target is made relative to
// its parent directory's descriptor and never through a symbolic link:
// see the package documentation.
func Tree(ctx context.Context, acc *pxar.Accessor, start *pxar.Entry, startPath, target string, opt TreeOptions) (*TreeReport, error) {
	if opt.Threads <= 0 {
		opt.Threads = runtime.NumCPU()
	}
	if opt.Threads > MaxThreads {
		return nil, fmt.Errorf("restore: %d threads, at most %d", opt.Threads, MaxThreads)
	}
	if opt.Stats == nil {
		opt.Stats = new(Stats)
	}
	opt.Owners = opt.Owners || os.Geteuid() == 0
	t := &treeRestore{acc: acc, opt: opt, report: &TreeReport{}, rootPath: strings.Trim(startPath, "/"),
		debug: opt.Logger != nil && opt.Logger.Enabled(ctx, slog.LevelDebug), lastDir: start.ID, lastNeeded: start.ID}
	rootFD, name, err := t.openTarget(target, start.IsDir())
	if err != nil {
		return nil, err
	}
	defer unix.Close(rootFD)
	t.rootFD = rootFD
	if start.IsDir() {
		clearMarker(rootFD)
	}
	t.root.included = t.rootIncluded(start.IsDir())
	if opt.Filter.excludedPath(t.rootPath, start.IsDir()) || (!start.IsDir() && !t.root.included) {
		return t.report, nil // nothing selected
	}
	if start.IsDir() && !t.root.included {
		t.needed = map[string]bool{}
		if _, err := t.findNeeded(ctx, start, t.rootPath, 0); err != nil {
			return t.report, err
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	files := &fileQueue{ch: make(chan []fileJob, 2*opt.Threads)}
	for i := 0; i < opt.Threads; i++ {
		g.Go(func() error { return t.fileWorker(gctx, files.ch) })
	}
	g.Go(func() error {
		defer close(files.ch)
		var err error
		if !start.IsDir() {
			t.atDir, t.atName, t.single.name = t.root, name, name
			err = t.entry(gctx, start, name, t.root, rootFD, files)
		} else {
			t.count(func(r *TreeReport) { r.Dirs++ })
			if _, err = t.dirEntries(gctx, start, t.root, rootFD, files); err == nil {
				t.dirMeta(rootFD, t.root, &start.Metadata)
			}
		}
		if err == nil {
			return files.flush(gctx)
		}
		files.discard()
		return err
	})
	err = g.Wait()
	rep := t.report
	rep.Bytes, rep.ZeroBytes = opt.Stats.Bytes.Load(), opt.Stats.ZeroBytes.Load()
	if err != nil && ctx.Err() != nil {
		t.interrupted(start, name)
		return rep, fmt.Errorf("restore into %s interrupted: %w", target, ctx.Err())
	}
	if err == nil && len(rep.Failed) > 0 {
		err = fmt.Errorf("restore into %s: %w (%d)", target, ErrPartial, len(rep.Failed))
	}
	return rep, err
}

type treeRestore struct {
	acc      *pxar.Accessor
	opt      TreeOptions
	rootPath string   // archive path of the restored entry, for hard links
	root     *dirNode // the target directory (of a single entry: its parent)
	rootFD   int

	mu     sync.Mutex
	report *TreeReport
	// failedFiles are the archive IDs of regular files that were not
	// created: a hard link to one must not link whatever has its name.
	failedFiles map[uint64]bool
	// needed are the archive paths of the directories on the way to
	// entries that include patterns select (with include patterns only).
	needed map[string]bool
	// atDir and atName are the entry the walk reached (written by the
	// walk only, read once it ended).
	atDir  *dirNode
	atName string
	debug  bool // log each entry
	// lastDir and lastNeeded are the archive offsets (IDs) of the last
	// directory the walk and findNeeded entered: in stored order they
	// increase, and a crafted archive that lists a directory twice is
	// refused (pxar.ErrSharedDir) rather than restored exponentially.
	lastDir, lastNeeded uint64
	// single is the regular file a single-entry restore made (removed
	// again if the restore is interrupted), by device and inode.
	single struct {
		name     string
		dev, ino uint64
		made     bool
	}
}

type fileJob struct {
	e    *pxar.Entry
	dir  *dirNode
	name string
	fd   int // created before it is queued
}

// openTarget makes sure target can take the restore and opens the
// directory the restore writes into: target itself for a directory, its
// parent for a single entry (name is then the entry's name in it). This
// is the only path the restore hands the kernel. A target directory that
// is a symbolic link is refused, with or without Overwrite; a single
// entry replaces one with Overwrite (it is made relative to its parent,
// like every entry).
func (t *treeRestore) openTarget(target string, dir bool) (fd int, name string, err error) {
	target = filepath.Clean(target)
	dirPath := target
	if !dir {
		dirPath, name = filepath.Dir(target), filepath.Base(target)
	}
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, os.ErrNotExist):
		err = os.MkdirAll(dirPath, 0o700)
	case err != nil:
	case dir && fi.Mode()&os.ModeSymlink != 0:
		err = fmt.Errorf("restore target %s is a symbolic link: refusing to follow or replace it", target)
	case !t.opt.Overwrite && (!dir || !fi.IsDir()):
		err = fmt.Errorf("restore target %s exists: give --overwrite to replace it", target)
	case dir && !fi.IsDir():
		if err = os.Remove(target); err == nil {
			err = os.Mkdir(target, 0o700)
		}
	}
	if err != nil {
		return -1, "", err
	}
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if dir {
		flags |= unix.O_NOFOLLOW // the target; a single entry's parent is the caller's
	}
	err = retry(func() (err error) { fd, err = unix.Open(dirPath, flags, 0); return err })
	if err != nil {
		return -1, "", &os.PathError{Op: "open", Path: dirPath, Err: err}
	}
	if err = t.checkEmpty(fd, dirPath, dir); err == nil {
		t.root, err = newDirNode(nil, dirPath, fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, "", err
	}
	return fd, name, nil
}

// checkEmpty refuses a non-empty target directory without Overwrite.
func (t *treeRestore) checkEmpty(fd int, path string, dir bool) error {
	if !dir || t.opt.Overwrite {
		return nil
	}
	dup, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(dup), path)
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && err != io.EOF {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if len(names) > 0 {
		var st unix.Stat_t
		if unix.Fstatat(fd, IncompleteMarker, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
			return fmt.Errorf("restore target %s holds %s, left by a restore that was interrupted: give --overwrite to restore into it again (or remove the directory)",
				path, IncompleteMarker)
		}
		return fmt.Errorf("restore target %s is not empty: give --overwrite to restore into it", path)
	}
	return nil
}

func (t *treeRestore) fail(path string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.report.Failed) < maxFailures {
		t.report.Failed = append(t.report.Failed, PathError{Path: path, Err: err.Error()})
	}
}

func (t *treeRestore) count(f func(r *TreeReport)) {
	t.mu.Lock()
	f(t.report)
	t.mu.Unlock()
}

// dirEntries restores the entries of directory d into its directory
// node, open at fd, streaming its listing. It returns the descriptor of
// the node, which a deep subdirectory may have made it open again, or -1
// with errMoved when the node is gone.
func (t *treeRestore) dirEntries(ctx context.Context, d *pxar.Entry, node *dirNode, fd int, files *fileQueue) (int, error) {
	// Stored order: the order of the contents in the payload stream, so
	// the workers read it forward and each chunk is loaded once; and a
	// hard link's target comes before the link.
	r, err := t.acc.ReadDirSorted(ctx, d)
	if err != nil {
		if ctx.Err() != nil {
			return fd, ctx.Err()
		}
		t.fail(node.path(""), err)
		return fd, nil
	}
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return fd, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return fd, ctx.Err()
			}
			t.fail(node.path(""), err) // the rest of this directory cannot be read
			return fd, nil
		}
		ch := restoreEntry
		if t.opt.Filter != nil {
			if ch, _ = t.choose(e, node); ch == skipEntry {
				continue
			}
		}
		t.atDir, t.atName = node, e.Name
		if t.debug {
			t.opt.Logger.Debug("restore", "path", node.path(e.Name))
		}
		if e.Kind == pxar.KindDir {
			fd, err = t.subdir(ctx, e, node, fd, files, ch == restoreEntry)
		} else {
			err = t.entry(ctx, e, e.Name, node, fd, files)
		}
		if err != nil || fd < 0 {
			return fd, err
		}
	}
}

// subdir restores directory e of the directory node parent (open at
// pfd) and returns parent's descriptor (see dirEntries).
func (t *treeRestore) subdir(ctx context.Context, e *pxar.Entry, parent *dirNode, pfd int, files *fileQueue, included bool) (int, error) {
	if e.ID <= t.lastDir {
		t.fail(parent.path(e.Name), pxar.ErrSharedDir)
		return pfd, nil
	}
	t.lastDir = e.ID
	if err := checkName(e.Name); err != nil {
		t.fail(parent.path(e.Name), err)
		return pfd, nil
	}
	if parent.depth+1 > maxDepth {
		t.fail(parent.path(e.Name), fmt.Errorf("directories nested deeper than %d levels", maxDepth))
		return pfd, nil
	}
	cfd, node, err := t.mkdir(parent, pfd, e.Name)
	if err != nil {
		t.fail(parent.path(e.Name), err)
		return pfd, nil
	}
	node.included = node.included || parent.included || included
	t.count(func(r *TreeReport) { r.Dirs++ })
	deep := node.depth > heldDepth
	if deep {
		unix.Close(pfd)
	}
	cfd, err = t.dirEntries(ctx, e, node, cfd, files)
	if err == nil && cfd >= 0 {
		t.dirMeta(cfd, node, &e.Metadata)
	}
	if !deep {
		if cfd >= 0 {
			unix.Close(cfd)
		}
		return pfd, err
	}
	pfd = -1
	if cfd >= 0 {
		if err == nil {
			pfd, _ = openParent(cfd, parent)
		}
		unix.Close(cfd)
	}
	if err != nil {
		return -1, err
	}
	if pfd < 0 {
		if pfd, err = parent.open(t.rootFD); err != nil {
			t.fail(parent.path(""), fmt.Errorf("open again to go on: %w", err))
			return -1, nil
		}
	}
	return pfd, nil
}
