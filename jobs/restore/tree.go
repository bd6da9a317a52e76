package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"
)

// ErrPartial is returned when some paths of a tree could not be restored.
var ErrPartial = errors.New("some paths were not restored")

// PathError is one path that failed to restore.
type PathError struct {
	Path string
	Err  string
}

// TreeOptions tune a file archive restore.
type TreeOptions struct {
	Threads   int  // content workers; default runtime.NumCPU()
	Overwrite bool // replace what exists at the target
	Owners    bool // restore owners (needs root); default: when root
	Stats     *Stats
}

// TreeReport is what a tree restore did.
type TreeReport struct {
	Files, Dirs, Others int64
	Bytes, ZeroBytes    int64
	Failed              []PathError
}

// maxFailures bounds the failures a report lists (the count goes on).
const maxFailures = 1000

// Tree restores the subtree at start (whose path in the archive is
// startPath, "" for the root) of acc into target, a directory
// that must not exist or be empty (unless Overwrite). Metadata is
// restored as far as the file system allows; contents are fetched by a
// pool of workers, and all-zero blocks stay holes.
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
	if err := prepareTarget(target, start.IsDir(), opt.Overwrite); err != nil {
		return nil, err
	}
	t := &treeRestore{acc: acc, opt: opt, root: target, report: &TreeReport{}, rootPath: strings.Trim(startPath, "/")}
	g, gctx := errgroup.WithContext(ctx)
	files := &fileQueue{ch: make(chan []fileJob, 2*opt.Threads)}
	for i := 0; i < opt.Threads; i++ {
		g.Go(func() error { return t.fileWorker(gctx, files.ch) })
	}
	g.Go(func() error {
		defer close(files.ch)
		var err error
		if !start.IsDir() {
			err = t.entry(gctx, start, target, files)
		} else {
			err = t.dir(gctx, start, target, files)
		}
		if err == nil {
			return files.flush(gctx)
		}
		files.discard()
		return err
	})
	err := g.Wait()
	if err == nil {
		t.finishLinks(ctx)
		t.finishDirs()
	}
	rep := t.report
	rep.Bytes, rep.ZeroBytes = opt.Stats.Bytes.Load(), opt.Stats.ZeroBytes.Load()
	if err == nil && len(rep.Failed) > 0 {
		err = fmt.Errorf("restore into %s: %w (%d)", target, ErrPartial, len(rep.Failed))
	}
	return rep, err
}

// prepareTarget makes sure target can take the restore.
func prepareTarget(target string, dir, overwrite bool) error {
	fi, err := os.Lstat(target)
	if errors.Is(err, os.ErrNotExist) {
		if dir {
			return os.MkdirAll(target, 0o700)
		}
		return os.MkdirAll(filepath.Dir(target), 0o755)
	}
	if err != nil {
		return err
	}
	if !dir || !fi.IsDir() {
		if overwrite {
			return nil
		}
		return fmt.Errorf("restore target %s exists: give --overwrite to replace it", target)
	}
	names, err := os.ReadDir(target)
	if err != nil {
		return err
	}
	if len(names) > 0 && !overwrite {
		return fmt.Errorf("restore target %s is not empty: give --overwrite to restore into it", target)
	}
	return nil
}

type treeRestore struct {
	acc      *pxar.Accessor
	opt      TreeOptions
	root     string
	rootPath string // archive path of the restored entry, for hard links

	mu     sync.Mutex
	report *TreeReport
	dirs   []dirMeta // set last, deepest first, so children do not touch them
	// links are hard links met before their target (directories list in
	// hash order): made once every file exists.
	links []fileJob
}

type dirMeta struct {
	path string
	m    pxar.Metadata
}

type fileJob struct {
	e    *pxar.Entry
	path string
	fd   int // created before it is queued, so hard links find it
}

// createFile creates a regular file for its content, with the
// permission bits it will have (the umask permitting), so that most
// files need no chmod afterwards. A bare descriptor, not an *os.File:
// that would cost five more system calls per file (poller registration
// and flag changes) for nothing.
func createFile(path string, m *pxar.Metadata) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, uint32(m.Stat.Mode&0o777))
		if err != unix.EINTR {
			if err != nil {
				return -1, &os.PathError{Op: "create", Path: path, Err: err}
			}
			return fd, nil
		}
	}
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

// dir restores a directory's entries, streaming its listing.
func (t *treeRestore) dir(ctx context.Context, d *pxar.Entry, path string, files *fileQueue) error {
	if err := os.Mkdir(path, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		t.fail(path, err)
		return nil
	}
	t.count(func(r *TreeReport) { r.Dirs++ })
	t.mu.Lock()
	t.dirs = append(t.dirs, dirMeta{path: path, m: d.Metadata})
	t.mu.Unlock()
	// Stored order: the order of the contents in the payload stream, so
	// the workers read it forward and each chunk is loaded once.
	r, err := t.acc.ReadDirSorted(ctx, d)
	if err != nil {
		t.fail(path, err)
		return nil
	}
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			t.fail(path, err) // the rest of this directory cannot be read
			return nil
		}
		if err := t.entry(ctx, e, filepath.Join(path, e.Name), files); err != nil {
			return err
		}
	}
}

// entry restores one entry; regular files go to the workers.
func (t *treeRestore) entry(ctx context.Context, e *pxar.Entry, path string, files *fileQueue) error {
	if t.opt.Overwrite && e.Kind != pxar.KindDir {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.fail(path, err)
			return nil
		}
	}
	var err error
	switch e.Kind {
	case pxar.KindDir:
		return t.dir(ctx, e, path, files)
	case pxar.KindFile:
		if e.Hardlink != "" {
			switch t.hardlink(e, path) {
			case linked:
				return nil
			case later:
				t.mu.Lock()
				t.links = append(t.links, fileJob{e: e, path: path})
				t.mu.Unlock()
				return nil
			}
		}
		fd, err := createFile(path, &e.Metadata)
		if err != nil {
			t.fail(path, err)
			return nil
		}
		return files.push(ctx, fileJob{e: e, path: path, fd: fd})
	case pxar.KindSymlink:
		err = unix.Symlink(e.Target, path)
	case pxar.KindDevice:
		err = unix.Mknod(path, uint32(e.Metadata.Stat.Mode), int(e.Device.Dev()))
	case pxar.KindFIFO:
		err = unix.Mkfifo(path, 0o600)
	case pxar.KindSocket:
		err = unix.Mknod(path, unix.S_IFSOCK|0o600, 0)
	default:
		err = fmt.Errorf("unknown entry kind %v", e.Kind)
	}
	if err == nil {
		err = t.setMeta(path, &e.Metadata, e.Kind == pxar.KindSymlink)
	}
	if err != nil {
		t.fail(path, err)
	}
	t.count(func(r *TreeReport) { r.Others++ })
	return nil
}

type linkResult int

const (
	linked linkResult = iota
	later             // the target is in the tree but not restored yet
	copyIt            // the target is outside the restored tree
)

// hardlink links path to the restored target when the target lies inside
// the restored tree.
func (t *treeRestore) hardlink(e *pxar.Entry, path string) linkResult {
	rel := strings.TrimPrefix(e.Hardlink, "/")
	if t.rootPath != "" {
		if !strings.HasPrefix(rel, t.rootPath+"/") {
			return copyIt
		}
		rel = strings.TrimPrefix(rel, t.rootPath+"/")
	}
	if rel == "" || strings.Contains("/"+rel+"/", "/../") {
		return copyIt
	}
	if err := os.Link(filepath.Join(t.root, rel), path); err != nil {
		return later
	}
	t.count(func(r *TreeReport) { r.Files++ })
	return linked
}

// finishLinks makes the hard links whose targets came after them; one
// whose target never appeared is restored as a copy.
func (t *treeRestore) finishLinks(ctx context.Context) {
	buf := make([]byte, 1<<20)
	for _, l := range t.links {
		if t.hardlink(l.e, l.path) == linked {
			continue
		}
		fd, err := createFile(l.path, &l.e.Metadata)
		if err == nil {
			err = t.file(ctx, fileJob{e: l.e, path: l.path, fd: fd}, buf)
		}
		if err != nil {
			t.fail(l.path, err)
			continue
		}
		t.count(func(r *TreeReport) { r.Files++ })
	}
}

// fileWorker writes file contents, leaving all-zero blocks as holes. Once
// ctx ends it only closes what is still queued.
func (t *treeRestore) fileWorker(ctx context.Context, batches <-chan []fileJob) error {
	buf := make([]byte, 1<<20)
	for batch := range batches {
		for _, j := range batch {
			if ctx.Err() != nil {
				unix.Close(j.fd)
				continue
			}
			if err := t.file(ctx, j, buf); err != nil {
				if ctx.Err() == nil {
					t.fail(j.path, err)
				}
				continue
			}
			t.count(func(r *TreeReport) { r.Files++ })
		}
	}
	return ctx.Err()
}

// fileQueue hands created files to the workers in batches: one channel
// operation (and at most one wakeup of a worker) per batch rather than
// per file, which for a tree of small files was a good part of the
// scheduler's work.
type fileQueue struct {
	ch    chan []fileJob
	batch []fileJob
	bytes uint64
}

// A batch goes out at this many files or content bytes, whichever first.
const (
	batchFiles = 16
	batchBytes = 1 << 20
)

func (q *fileQueue) push(ctx context.Context, j fileJob) error {
	q.batch = append(q.batch, j)
	q.bytes += j.e.Size
	if len(q.batch) < batchFiles && q.bytes < batchBytes {
		return nil
	}
	return q.flush(ctx)
}

// flush sends the batch; if ctx ends first, it closes the batch's files.
func (q *fileQueue) flush(ctx context.Context) error {
	if len(q.batch) == 0 {
		return nil
	}
	select {
	case q.ch <- q.batch:
		q.batch, q.bytes = nil, 0
		return nil
	case <-ctx.Done():
		q.discard()
		return ctx.Err()
	}
}

// discard closes the files of a batch that will not be sent.
func (q *fileQueue) discard() {
	for _, j := range q.batch {
		unix.Close(j.fd)
	}
	q.batch, q.bytes = nil, 0
}

func (t *treeRestore) file(ctx context.Context, j fileJob, buf []byte) error {
	src, err := t.acc.Open(ctx, j.e)
	var end int64
	if err == nil {
		end, err = copySparse(ctx, j.fd, src, buf, t.opt.Stats)
	}
	if err == nil && end < int64(j.e.Size) {
		if err = unix.Ftruncate(j.fd, int64(j.e.Size)); err != nil { // a hole at the end
			err = fmt.Errorf("truncate: %w", err)
		}
	}
	if err == nil {
		err = t.applyMeta(fdOps(j.fd), &j.e.Metadata, false)
	}
	if cerr := unix.Close(j.fd); err == nil && cerr != nil {
		err = fmt.Errorf("close: %w", cerr)
	}
	return err
}

// pwriteFull writes all of b at off.
func pwriteFull(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := unix.Pwrite(fd, b, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("write at offset %d: %w", off, err)
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// copySparse copies src to fd, skipping blocks of zeros (they stay holes
// once the file is truncated to its size). It returns the end of the
// last block written.
func copySparse(ctx context.Context, fd int, src *io.SectionReader, buf []byte, st *Stats) (int64, error) {
	var off, end int64
	for {
		if err := ctx.Err(); err != nil {
			return end, err
		}
		n, err := src.ReadAt(buf, off)
		if n > 0 {
			if chunk.IsZero(buf[:n]) {
				st.ZeroBytes.Add(int64(n))
			} else if werr := pwriteFull(fd, buf[:n], off); werr != nil {
				return end, werr
			} else {
				end = off + int64(n)
			}
			st.Bytes.Add(int64(n))
			off += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return end, nil
		}
		if err != nil {
			return end, fmt.Errorf("offset %d: %w", off, err)
		}
	}
}

// finishDirs sets directory metadata last, deepest first.
func (t *treeRestore) finishDirs() {
	for i := len(t.dirs) - 1; i >= 0; i-- {
		d := t.dirs[i]
		if err := t.setMeta(d.path, &d.m, false); err != nil {
			t.fail(d.path, err)
		}
	}
}
