package walk

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cairnfs/cairn/internal/dirent"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// entry archives one directory entry, e as the walk's own listing
// gave it. Problems with the entry itself are reported and skipped; only
// encoder errors end the walk.
func (w *walker) entry(dirfd int, parent string, e dirent.Entry) error {
	name := e.Name
	rel := join(parent, name)
	held := w.ra.pass(rel) // the helper's open file, or nil
	defer held.close()     // unless w.file took it over
	if held != nil && held.st.Ino != e.Ino {
		// Not the file this listing has at the name (replaced since the
		// helper opened it, or its directory swapped): the walk opens
		// its own. On a file system whose d_ino is not st_ino this only
		// costs the helper's open.
		held.close()
		held = nil
	}
	var st unix.Stat_t
	if held != nil {
		st = held.st // fstat of the regular file opened at this name
	} else if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		w.reportGone(rel, err)
		return nil
	}
	typ := uint64(st.Mode) & pxar.ModeIFMT
	if w.leftOut(rel, typ == pxar.ModeIFDIR) {
		w.stats.Excluded++
		return nil
	}
	var err error
	switch typ {
	case pxar.ModeIFREG:
		err = w.file(dirfd, rel, name, &st, held)
	case pxar.ModeIFDIR:
		err = w.subdir(dirfd, rel, name)
	case pxar.ModeIFLNK:
		err = w.symlink(dirfd, rel, name, &st)
	case pxar.ModeIFCHR, pxar.ModeIFBLK, pxar.ModeIFIFO, pxar.ModeIFSOCK:
		err = w.special(dirfd, rel, name, &st)
	default:
		w.report(rel, fmt.Errorf("unknown file type %o", typ))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", rel, err)
	}
	return nil
}

// leftOut tells whether the selection or the patterns leave out the
// entry at rel.
func (w *walker) leftOut(rel string, isDir bool) bool {
	sel := w.opts.Select
	if sel != nil && !sel.take(rel, isDir) {
		return true
	}
	if !w.patterns.excluded("/"+rel, isDir) {
		return false
	}
	if sel != nil && isDir {
		sel.leftOut(rel)
	}
	return true
}

func (w *walker) reportGone(rel string, err error) {
	if errors.Is(err, unix.ENOENT) {
		err = fmt.Errorf("vanished during backup: %w", err)
	}
	w.report(rel, err)
}

// open opens an entry for reading; nil means it was reported and skipped.
func (w *walker) open(dirfd int, rel, name string, flags int, want uint64) (int, *unix.Stat_t) {
	fd, err := openNoatime(dirfd, name, flags)
	if err != nil {
		w.reportGone(rel, err)
		return -1, nil
	}
	st := new(unix.Stat_t)
	if err := unix.Fstat(fd, st); err != nil {
		unix.Close(fd)
		w.report(rel, err)
		return -1, nil
	}
	if uint64(st.Mode)&pxar.ModeIFMT != want {
		unix.Close(fd)
		w.report(rel, errors.New("replaced during backup"))
		return -1, nil
	}
	return fd, st
}

// file archives a regular file; held, if not nil, is the helper's open
// descriptor of it (lst its fstat), which file takes over.
func (w *walker) file(dirfd int, rel, name string, lst *unix.Stat_t, held *raOpen) error {
	key := devIno{dev: lst.Dev, ino: lst.Ino}
	if lst.Nlink > 1 {
		if l, ok := w.links[key]; ok {
			w.stats.Hardlinks++
			return w.enc.AddHardlink(name, l.path, l.off)
		}
	}
	if w.opts.Reuse != nil {
		off, ok, err := w.opts.Reuse(w.ctx, w.enc, &Candidate{Name: name, Path: rel, Stat: lst})
		if err != nil {
			return err
		}
		if ok {
			w.stats.Reused++
			w.stored(lst, rel, off)
			return nil
		}
	}
	var fd int
	var st *unix.Stat_t
	var m pxar.Metadata
	var content Content
	if held != nil {
		fd, st, m = held.fd, lst, held.meta
		held.fd = -1
		if held.data != nil { // given back by held.close when the file is stored
			content = &prereadReader{fdReader: fdReader{fd: fd, path: rel}, data: held.data}
		}
	} else {
		if fd, st = w.open(dirfd, rel, name, 0, pxar.ModeIFREG); st == nil {
			return nil
		}
		if testOpened != nil {
			testOpened(rel)
		}
		var err error
		if m, err = readMetadata(st, xattrSource{fd: fd}, fd); err != nil {
			unix.Close(fd)
			w.report(rel, err)
			return nil
		}
	}
	defer unix.Close(fd)
	if content == nil {
		content = fdReader{fd: fd, path: rel}
	}
	off, err := w.opts.File(w.ctx, w.enc, &File{Name: name, Path: rel, Meta: &m, Stat: st, F: content})
	var ce *pxar.ContentError
	if errors.As(err, &ce) {
		w.report(rel, err)
		err = nil
	}
	if err != nil {
		return err
	}
	w.stored(st, rel, off)
	return nil
}

// stored counts a regular file added at off and remembers it as the
// target of later hard links to it.
func (w *walker) stored(st *unix.Stat_t, rel string, off pxar.LinkOffset) {
	w.stats.Files++
	w.stats.Bytes += uint64(st.Size)
	if st.Nlink > 1 {
		w.links[devIno{dev: st.Dev, ino: st.Ino}] = link{path: rel, off: off}
	}
}

func (w *walker) subdir(dirfd int, rel, name string) error {
	fd, st := w.open(dirfd, rel, name, unix.O_DIRECTORY, pxar.ModeIFDIR)
	if st == nil {
		return nil
	}
	defer unix.Close(fd)
	m, err := readMetadata(st, xattrSource{fd: fd}, fd)
	if err != nil {
		w.report(rel, err)
		return nil
	}
	if err := w.enc.CreateDirectory(name, &m); err != nil {
		return err
	}
	w.stats.Dirs++
	switch {
	case st.Dev != w.rootDev && !w.opts.AllFileSystems:
		w.stats.MountPoints++
	case st.Dev != w.rootDev && virtualFS(fd): // only a mount point can start another file system
		w.stats.MountPoints++
	default:
		if err := w.dir(fd, rel); err != nil {
			return err
		}
	}
	return w.enc.FinishDirectory()
}

func (w *walker) symlink(dirfd int, rel, name string, st *unix.Stat_t) error {
	buf := make([]byte, max(st.Size+1, 256))
	for {
		n, err := unix.Readlinkat(dirfd, name, buf)
		if err != nil {
			w.reportGone(rel, err)
			return nil
		}
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	m, err := readMetadata(st, w.pathSource(dirfd, rel, name), -1)
	if err != nil {
		w.report(rel, err)
		return nil
	}
	w.stats.Symlinks++
	return w.enc.AddSymlink(name, &m, string(buf))
}

func (w *walker) special(dirfd int, rel, name string, st *unix.Stat_t) error {
	m, err := readMetadata(st, w.pathSource(dirfd, rel, name), -1)
	if err != nil {
		w.report(rel, err)
		return nil
	}
	w.stats.Specials++
	switch {
	case m.Stat.IsDevice():
		return w.enc.AddDevice(name, &m, pxar.DeviceFromDev(st.Rdev))
	case m.Stat.IsFIFO():
		return w.enc.AddFIFO(name, &m)
	default:
		return w.enc.AddSocket(name, &m)
	}
}

// fdReader reads an open regular file with read(2), without the system
// calls an *os.File costs to set up (fcntl, and epoll_ctl for the
// helper's O_NONBLOCK descriptors).
type fdReader struct {
	fd   int
	path string // in errors
}

// again tells whether a failed call is to be made again: EINTR, or
// EAGAIN the first time (the helper's O_NONBLOCK, on a file system that
// heeds it for regular files, is cleared).
func (r fdReader) again(err error, cleared *bool) bool {
	if errors.Is(err, unix.EINTR) {
		return true
	}
	if errors.Is(err, unix.EAGAIN) && !*cleared {
		*cleared = true
		return unix.SetNonblock(r.fd, false) == nil
	}
	return false
}

func (r fdReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	cleared := false
	for {
		n, err := unix.Read(r.fd, p)
		switch {
		case err != nil && r.again(err, &cleared):
			continue
		case err != nil:
			return 0, &os.PathError{Op: "read", Path: r.path, Err: err}
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

func (r fdReader) ReadAt(p []byte, off int64) (int, error) {
	done, cleared := 0, false
	for done < len(p) {
		n, err := unix.Pread(r.fd, p[done:], off+int64(done))
		switch {
		case err != nil && r.again(err, &cleared):
			continue
		case err != nil:
			return done, &os.PathError{Op: "read", Path: r.path, Err: err}
		case n == 0:
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}
