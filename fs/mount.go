package fs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// mountFS is what every node of one mount shares.
type mountFS struct {
	s         *store.Store
	cache     *chunkcache.Cache
	readahead int
	imageMode uint32 // permission bits of images and blobs
	// statusMode is the permission bits of .stats (Options.StatusMode)
	statusMode uint32
	refresh    time.Duration // how stale a changing listing may be
	timeout    time.Duration // the kernel's entry and attribute timeout
	log        *slog.Logger
	owner      fuse.Owner
	started    time.Time
	bg         context.Context // ends at unmount: stops read-ahead
	trees      TreeOpener
	listIdx    *store.ListingIndex // snapshot listings (fs/layout); nil for a remote store
	lay        *layout.Layout      // the model of the tree above the archives (layout.go)

	noOpen     bool       // files are read without OPEN (noopen.go)
	prefill    *prefiller // small files stored in the page cache ahead (prefill.go)
	openTrees  sync.Map   // *openTree → true: closed at unmount
	lazyFiles  sync.Map   // *lazyFile → true: released at unmount
	keyLogged  sync.Map   // snapshot name → true: why it cannot be read was logged (crypt.go)
	served     atomic.Int64
	readErrors atomic.Int64
	raw        *rawTable        // the nodes the kernel holds (rawtable.go), served on go-fuse's raw API (raw.go)
	fixed      map[string]vnode // the root's entries that live as long as the mount (newRoot)
}

// Server serves a store mounted on a directory.
type Server struct {
	dir    string
	dev    uint64 // the mount's device number (bdi and fusectl connection)
	direct bool   // mounted with mount(2), not fusermount
	grace  time.Duration
	server *fuse.Server
	fsys   *mountFS
	cancel context.CancelFunc
	done   chan struct{}

	subMu sync.Mutex
	subs  []*subMount // the extra entries' own mounts (split mode)

	once sync.Once
	err  error
}

// Mount mounts the store (or the part opt.Scope names) read-only on dir
// and serves it in the background until Unmount, an external unmount
// (`cairn umount`, umount(8)) or the end of ctx's process. It returns once
// the kernel has the mount.
func Mount(ctx context.Context, dir string, opt Options) (*Server, error) {
	if err := opt.setDefaults(); err != nil {
		return nil, err
	}
	mp, err := checkMountpoint(dir, opt.Store.Root(), opt.NonEmpty)
	if err == nil && opt.AllowOther {
		err = checkAllowOther()
	}
	if err != nil {
		return nil, err
	}
	cache, err := store.NewCache(opt.Store, opt.CacheSize)
	if err != nil {
		return nil, err
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &mountFS{s: opt.Store, cache: cache, readahead: opt.Readahead, imageMode: opt.ImageMode, statusMode: opt.StatusMode, refresh: opt.Refresh,
		timeout: opt.Timeout, log: opt.Log, started: time.Now(), bg: bg, trees: opt.Trees,
		listIdx: opt.Store.OpenListingIndex(opt.Log),
		owner:   fuse.Owner{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}}
	f.lay = f.newLayout()
	m := &Server{dir: mp, direct: os.Geteuid() == 0, grace: opt.UnmountGrace, fsys: f, cancel: cancel, done: make(chan struct{})}
	split := m.direct && !opt.OneMount
	f.noOpen = split
	rootExtra := opt.Extra
	if split {
		rootExtra = f.placeholders(opt.Extra)
	}
	f.raw = newRawTable(f.newRoot(opt.Scope, rootExtra))
	rfs := newRawFS(f, f.raw) // every node (raw.go)
	var raw fuse.RawFileSystem = rfs
	if split {
		raw = &noOpendirFS{RawFileSystem: raw} // read-only: every listing may be cached (noopendir.go)
	}
	mopts := m.mountOptions(opt, split)
	server, err := fuse.NewServer(raw, mp, &mopts)
	if err != nil {
		cancel()
		cache.Close()
		return nil, mountError(mp, err)
	}
	m.server = server
	f.prefill = startPrefiller(bg, rfs)
	go f.lay.RefreshStore(bg, opt.StoreRefresh)
	go func() {
		server.Serve()
		m.endSubs()
		cancel()
		f.prefill.wg.Wait()
		f.closeLazyFiles()
		f.closeTrees()
		f.listIdx.Close()
		cache.Close()
		close(m.done)
	}()
	if err := server.WaitMount(); err != nil {
		m.Unmount()
		return nil, mountError(mp, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(mp, &st); err != nil {
		m.Unmount()
		return nil, fmt.Errorf("mount %s: %w", mp, err)
	}
	m.dev = st.Dev
	if opt.ReadAheadKB > 0 {
		if err := setReadAhead(m.dev, opt.ReadAheadKB); err != nil {
			f.log.Debug("read-ahead left at the kernel's default", "err", err)
		}
	}
	if split {
		for _, x := range opt.Extra {
			if err := m.mountSub(opt, x); err != nil {
				m.Unmount()
				return nil, err
			}
		}
	}
	return m, nil
}

// mountOptions are the go-fuse options of the mount; ro makes the kernel
// mount read-only.
func (m *Server) mountOptions(opt Options, ro bool) fuse.MountOptions {
	flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV)
	if ro {
		flags |= syscall.MS_RDONLY
	}
	level := slog.LevelWarn
	if opt.Debug {
		level = slog.LevelInfo
	}
	logger := slog.NewLogLogger(opt.Log.Handler(), level)
	return fuse.MountOptions{
		AllowOther:    opt.AllowOther,
		FsName:        "cairn:" + opt.Store.Root(),
		Name:          "cairn",
		Options:       []string{"default_permissions"},
		MaxWrite:      maxRequest,
		MaxReadAhead:  maxRequest,
		MaxBackground: 64,
		DisableSplice: true,
		// With other users, the kernel checks POSIX ACLs too
		// (FUSE_POSIX_ACL: with default_permissions it reads
		// system.posix_acl_access, which file archives serve, and judges
		// the caller's uid and groups). Without them only the mounting
		// user, who can read the whole store, gets in: the GETXATTR per
		// inode would be a cost for nothing.
		EnableAcl:         opt.AllowOther,
		DirectMountStrict: m.direct,
		DirectMountFlags:  flags,
		// .stats changes its mtime to have its cached page dropped.
		ExtraCapabilities: fuse.CAP_AUTO_INVAL_DATA,
		// Symlink targets are cached: a file archive's never change, and
		// latest is a new inode when it moves (layout.go).
		EnableSymlinkCaching: true,
		Debug:                opt.Debug,
		Logger:               logger,
	}
}

// newRoot builds the root directory for the scope, with .stats and the
// extra entries as nodes that live as long as the mount.
func (f *mountFS) newRoot(sc Scope, extra []RootEntry) *dir {
	lay := f.lay
	var d *layout.Dir
	switch {
	case sc.Snapshot != nil:
		d = lay.SnapshotDir(*sc.Snapshot, store.ManifestStamp{})
	case sc.Group != nil:
		d = lay.GroupDir(*sc.Group)
	default:
		d = lay.NSDir(sc.NS)
	}
	statsAttr := f.makeAttr(syscall.S_IFREG|f.statusMode, inoOf(statsName), 0, f.started)
	f.fixed = map[string]vnode{statsName: &statsFile{node: node{fsys: f, attr: statsAttr}}}
	fixed := []layout.Entry{{Name: statsName, Kind: layout.KindMount, Mode: statsAttr.Mode, Ino: statsAttr.Ino, Mtime: f.started}}
	for _, x := range extra {
		f.fixed[x.Name] = x.New()
		fixed = append(fixed, layout.Entry{Name: x.Name, Kind: layout.KindMount, Mode: x.Mode&syscall.S_IFMT | 0o555, Ino: inoOf(x.Name), Mtime: f.started})
	}
	d.Add(fixed...)
	return f.newDir(f.makeAttr(layout.ModeDir, fuse.FUSE_ROOT_ID, 0, f.started), d)
}

// Dir returns the mountpoint (absolute, symlinks resolved).
func (m *Server) Dir() string { return m.dir }

// Done is closed when the filesystem is no longer served.
func (m *Server) Done() <-chan struct{} { return m.done }

// Wait blocks until the filesystem is no longer served.
func (m *Server) Wait() { <-m.done }

// Stats returns the mount's counters.
func (m *Server) Stats() Stats { return m.fsys.stats() }

// Unmount unmounts and waits until serving has stopped. When files are
// still open it detaches the mount (it disappears at once; open files keep
// working) and waits up to Options.UnmountGrace for them to be closed,
// then aborts the connection, so no dead mount is ever left behind.
func (m *Server) Unmount() error {
	m.once.Do(func() { m.err = m.unmount() })
	return m.err
}

func (m *Server) unmount() error {
	select {
	case <-m.done:
		return nil
	default:
	}
	if err := m.unmountSubs(); err != nil {
		return err
	}
	if err := unmountServed(m.dir, m.dev, m.direct, m.grace, m.done, m.fsys.log); err != nil {
		return err
	}
	<-m.done
	return nil
}

// unmountServed unmounts one mount this process serves and waits until
// done is closed. A busy mount is detached and given grace to be closed
// before its connection is aborted.
func unmountServed(dir string, dev uint64, direct bool, grace time.Duration, done <-chan struct{}, log *slog.Logger) error {
	err := unmountDir(dir, false, direct)
	if errors.Is(err, syscall.EBUSY) {
		log.Warn("mount busy: detaching it; open files keep working until closed", "dir", dir, "grace", grace)
		err = unmountDir(dir, true, direct)
		if err == nil {
			select {
			case <-done:
			case <-time.After(grace):
				log.Warn("files still open after the grace period: aborting the connection", "dir", dir)
				if aerr := abortConn(dev); aerr != nil {
					return fmt.Errorf("unmount %s: %w", dir, aerr)
				}
			}
		}
	}
	if err != nil && dev != 0 {
		// The mountpoint is not ours any more (gone, or never finished
		// mounting): end the connection so Serve returns.
		if aerr := abortConn(dev); aerr == nil {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", dir, err)
	}
	<-done
	return nil
}
