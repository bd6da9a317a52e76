package walk

import (
	"context"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/internal/dirent"
	"golang.org/x/sys/unix"
)

// readAhead walks the tree ahead of the walk, in the walk's order (names
// sorted, the same exclude patterns, the same file system boundaries),
// and warms the caches the walk will need: it lists directories, and a
// pool of workers stats each entry (stat-ahead) or, for a regular file
// when content is wanted, opens it and asks the kernel to read it into
// the page cache (posix_fadvise WILLNEED). A regular file it opened is
// held for the walk with its fstat and metadata (raOpen, bounded by
// maxOpen as well as the window's limits): the walk takes the descriptor
// over instead of stat'ing, opening and reading the metadata of the file
// again; a small file's content it has read as well (preread), so that
// the walk's thread waits for no read of it, else the walk reads it. The walk still lists every directory and
// handles every other entry itself, so what it stores is the same with
// or without the helper: the same inode at the same name (the walk takes
// a held file only if its inode is the d_ino of the walk's own listing
// at that name), read through the same calls. Its opens are the walk's
// (each relative to its directory's descriptor, O_NOFOLLOW), plus
// O_NONBLOCK, and only of entries listed as regular files; errors only
// end its work on that entry (the walk meets them again and reports
// them).
type readAhead struct {
	ctx     context.Context
	cancel  context.CancelFunc
	win     *raWindow
	jobs    chan raJob
	wg      sync.WaitGroup
	content bool
	allFS   bool
	rootDev uint64
	perFile int64
	since   int64 // ReadAhead.ChangedSince in ns (0: none)
	pats    patternList
	sel     *Selection // the walk's (nil: everything)
	buf     []byte
	advised atomic.Int64 // files whose content was asked for
	preread atomic.Int64 // files whose content it read for the walk
}

// In tests: testStarted hears of each helper started, testOpened of
// each regular file opened (by the helper or the walk).
var (
	testStarted func(*readAhead)
	testOpened  func(path string)
)

// raDir is a directory descriptor of the helper, closed when its listing
// and the jobs of its entries are done.
type raDir struct {
	fd   int
	refs atomic.Int32
}

func (d *raDir) release() {
	if d.refs.Add(-1) == 0 {
		unix.Close(d.fd)
	}
}

type raJob struct {
	dir  *raDir
	name string
	typ  uint8 // DT_*
	it   *raItem
}

// startReadAhead starts the helper on the root open at rootFD (it opens
// its own descriptor: a directory's offset is shared by duplicates).
// content asks for regular files' data, not only their inodes.
func startReadAhead(ctx context.Context, rootFD int, rootDev uint64, cli patternList, sel *Selection, content, allFS bool,
	lim ReadAhead) *readAhead {
	lim = lim.withDefaults()
	r := &readAhead{win: newWindow(lim), jobs: make(chan raJob, 2*lim.Workers), content: content,
		allFS: allFS, rootDev: rootDev, perFile: max(lim.Bytes/4, 1), pats: slices.Clone(cli), sel: sel}
	if !content && !lim.ChangedSince.IsZero() {
		r.since = max(lim.ChangedSince.UnixNano(), 1)
	}
	r.ctx, r.cancel = context.WithCancel(ctx)
	if testStarted != nil {
		testStarted(r)
	}
	fd, err := openNoatime(rootFD, ".", unix.O_DIRECTORY)
	if err != nil {
		close(r.jobs)
		return r
	}
	root := &raDir{fd: fd}
	root.refs.Store(1)
	r.wg.Add(1 + lim.Workers)
	go func() {
		defer r.wg.Done()
		defer close(r.jobs)
		r.dir(root, "")
	}()
	for range lim.Workers {
		go func() {
			defer r.wg.Done()
			for j := range r.jobs {
				r.do(j)
				j.dir.release()
			}
		}()
	}
	return r
}

// pass tells the helper that the walk reached path, and returns the
// file held open for it, if any: the caller owns it (raOpen.close).
func (r *readAhead) pass(path string) *raOpen {
	if r == nil {
		return nil
	}
	return r.win.pass(path)
}

// stop ends the helper and waits for its goroutines; every descriptor
// it opened is closed.
func (r *readAhead) stop() {
	if r == nil {
		return
	}
	r.cancel()
	r.win.close()
	r.wg.Wait()
}

// dir goes through the entries of the directory d at rel, in walk order,
// and releases d.
func (r *readAhead) dir(d *raDir, rel string) {
	defer d.release()
	ents, _ := dirent.Read(d.fd, &r.buf) // an error ends the list early (the walk reports it)
	npat := len(r.pats)
	defer func() { r.pats = r.pats[:npat] }()
	if slices.ContainsFunc(ents, func(e dirent.Entry) bool { return e.Name == ".pxarexclude" }) {
		r.readExcludes(d.fd, rel)
	}
	if rel == "" {
		ents = slices.DeleteFunc(ents, func(e dirent.Entry) bool { return e.Name == cliName })
	}
	dirent.SortByName(ents)
	for _, e := range ents {
		if r.ctx.Err() != nil {
			return
		}
		r.entry(d, rel, e.Name, e.Type)
	}
}

func (r *readAhead) entry(d *raDir, parent, name string, typ uint8) {
	rel := join(parent, name)
	if typ == unix.DT_UNKNOWN {
		var st unix.Stat_t
		if unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			return
		}
		typ = dtype(st.Mode)
	}
	if (r.sel != nil && !r.sel.has(rel, typ == unix.DT_DIR)) || r.pats.excluded("/"+rel, typ == unix.DT_DIR) {
		return
	}
	it := &raItem{path: rel}
	if !r.win.push(it) {
		return
	}
	if typ == unix.DT_DIR {
		r.subdir(d.fd, rel, name)
		return
	}
	d.refs.Add(1)
	select {
	case r.jobs <- raJob{dir: d, name: name, typ: typ, it: it}:
	case <-r.ctx.Done():
		d.release()
	}
}

// subdir descends where the walk will: not into another file system
// unless asked to, never into a virtual one below the root.
func (r *readAhead) subdir(dirfd int, rel, name string) {
	fd, err := openNoatime(dirfd, name, unix.O_DIRECTORY)
	if err != nil {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || (st.Dev != r.rootDev && (!r.allFS || virtualFS(fd))) {
		unix.Close(fd)
		return
	}
	d := &raDir{fd: fd}
	d.refs.Store(1)
	r.dir(d, rel)
}

// do warms the caches for one entry the walk has not reached yet.
func (r *readAhead) do(j raJob) {
	if r.ctx.Err() != nil || r.win.stale(j.it) {
		return
	}
	if j.typ == unix.DT_REG && (r.content || r.recent(j)) {
		r.advise(j)
		return
	}
	var st unix.Stat_t
	_ = unix.Fstatat(j.dir.fd, j.name, &st, unix.AT_SYMLINK_NOFOLLOW)
}

// recent stats an entry and tells whether its ctime is not before
// ChangedSince.
func (r *readAhead) recent(j raJob) bool {
	var st unix.Stat_t
	return r.since != 0 && unix.Fstatat(j.dir.fd, j.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		st.Ctim.Nano() >= r.since
}

// advise opens a regular file, reads its metadata, asks the kernel for
// its content once it fits in the window, and offers it to the walk.
func (r *readAhead) advise(j raJob) {
	fd, err := openNoatime(j.dir.fd, j.name, unix.O_NONBLOCK)
	if err != nil {
		return
	}
	if testOpened != nil {
		testOpened(j.it.path)
	}
	o := &raOpen{fd: fd}
	defer func() { o.close() }() // unless offered (o nil)
	if unix.Fstat(fd, &o.st) != nil || o.st.Mode&unix.S_IFMT != unix.S_IFREG {
		return
	}
	if o.st.Size > 0 {
		n := min(o.st.Size, r.perFile)
		if !r.win.charge(j.it, n) {
			return
		}
		_ = unix.Fadvise(fd, 0, n, unix.FADV_WILLNEED)
		r.advised.Add(1)
	}
	if !r.content {
		return // a walk with Reuse may not open it at all
	}
	if o.meta, err = readMetadata(&o.st, xattrSource{fd: fd}, fd); err != nil {
		return
	}
	if o.st.Size > 0 && o.st.Size <= min(maxPreread, r.perFile) {
		if o.data = preread(fd, o.st.Size); o.data != nil {
			r.preread.Add(1)
		}
	}
	if r.win.offer(j.it, o) {
		o = nil
	}
}

func (r *readAhead) readExcludes(dirfd int, rel string) {
	fd, err := openNoatime(dirfd, ".pxarexclude", unix.O_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), ".pxarexclude")
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return
	}
	dirPath := ""
	if rel != "" {
		dirPath = "/" + rel
	}
	pats, _ := readExcludeFile(f, dirPath)
	r.pats = append(r.pats, pats...)
}

func dtype(mode uint32) uint8 {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}
