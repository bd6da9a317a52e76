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

	"github.com/cairnfs/cairn/store"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// mountFS is what every node of one mount shares.
type mountFS struct {
	s         *store.Store
	cache     *store.Cache
	readahead int
	refresh   time.Duration
	log       *slog.Logger
	owner     fuse.Owner
	started   time.Time
	bg        context.Context // ends at unmount: stops read-ahead
	trees     TreeOpener

	openTrees  sync.Map // *openTree → true: closed at unmount
	served     atomic.Int64
	readErrors atomic.Int64
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
	mp, err := checkMountpoint(dir, opt.Store.Root())
	if err != nil {
		return nil, err
	}
	cache, err := store.NewCache(opt.Store, opt.CacheSize)
	if err != nil {
		return nil, err
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	f := &mountFS{s: opt.Store, cache: cache, readahead: opt.Readahead, refresh: opt.Refresh,
		log: opt.Log, started: time.Now(), bg: bg, trees: opt.Trees,
		owner: fuse.Owner{Uid: uint32(os.Geteuid()), Gid: uint32(os.Getegid())}}
	root, onAdd := f.newRoot(opt.Scope, opt.Extra)
	m := &Server{dir: mp, direct: os.Geteuid() == 0, grace: opt.UnmountGrace, fsys: f, cancel: cancel, done: make(chan struct{})}
	gopts := m.fuseOptions(opt, onAdd)
	server, err := fuse.NewServer(gofs.NewNodeFS(root, gopts), mp, &gopts.MountOptions)
	if err != nil {
		cancel()
		cache.Close()
		return nil, mountError(mp, err)
	}
	m.server = server
	go func() {
		server.Serve()
		f.closeTrees()
		cancel()
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
	return m, nil
}

// fuseOptions are the go-fuse options of the mount.
func (m *Server) fuseOptions(opt Options, onAdd func(context.Context)) *gofs.Options {
	timeout := opt.Timeout
	level := slog.LevelWarn
	if opt.Debug {
		level = slog.LevelInfo
	}
	logger := slog.NewLogLogger(opt.Log.Handler(), level)
	return &gofs.Options{
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
		OnAdd:        onAdd,
		Logger:       logger,
		MountOptions: fuse.MountOptions{
			AllowOther:        opt.AllowOther,
			FsName:            "cairn:" + opt.Store.Root(),
			Name:              "cairn",
			Options:           []string{"default_permissions"},
			MaxWrite:          maxRequest,
			MaxReadAhead:      maxRequest,
			MaxBackground:     64,
			DisableSplice:     true,
			DirectMountStrict: m.direct,
			DirectMountFlags:  syscall.MS_NOSUID | syscall.MS_NODEV,
			Debug:             opt.Debug,
			Logger:            logger,
		},
	}
}

// newRoot builds the root directory for the scope, with .stats and the
// extra entries as nodes that live as long as the mount.
func (f *mountFS) newRoot(sc Scope, extra []RootEntry) (*dir, func(context.Context)) {
	attr := f.makeAttr(modeDir, fuse.FUSE_ROOT_ID, 0, f.started)
	var root *dir
	switch {
	case sc.Snapshot != nil:
		root = f.newDir(attr, sc.Snapshot.String(), 0, f.snapshotLister(*sc.Snapshot))
	case sc.Group != nil:
		root = f.newGroupDir(attr, *sc.Group)
	default:
		root = f.newDir(attr, "/"+string(sc.NS), f.refresh, f.nsLister(sc.NS))
	}
	type fixed struct {
		e    entry
		node gofs.InodeEmbedder
	}
	statsAttr := f.makeAttr(modeFile, inoOf(statsName), 0, f.started)
	fixeds := []fixed{{node: &statsFile{node: node{fsys: f, attr: statsAttr}}, e: entry{name: statsName, attr: statsAttr}}}
	for _, x := range extra {
		a := f.makeAttr(x.Mode&syscall.S_IFMT|0o555, inoOf(x.Name), 0, f.started)
		fixeds = append(fixeds, fixed{node: x.New(), e: entry{name: x.Name, attr: a}})
	}
	var es []entry
	for _, x := range fixeds {
		n := x.node
		x.e.make = func(fuse.Attr) gofs.InodeEmbedder { return n }
		es = append(es, x.e)
	}
	list := root.list
	root.list = func(ctx context.Context) ([]entry, error) {
		out, err := list(ctx)
		return append(out, es...), err
	}
	onAdd := func(ctx context.Context) {
		for _, x := range fixeds {
			ch := root.NewPersistentInode(ctx, x.node, gofs.StableAttr{Mode: x.e.attr.Mode & syscall.S_IFMT, Ino: x.e.attr.Ino})
			root.AddChild(x.e.name, ch, true)
		}
	}
	return root, onAdd
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
	err := unmountDir(m.dir, false, m.direct)
	if errors.Is(err, syscall.EBUSY) {
		m.fsys.log.Warn("mount busy: detaching it; open files keep working until closed", "dir", m.dir, "grace", m.grace)
		err = unmountDir(m.dir, true, m.direct)
		if err == nil {
			select {
			case <-m.done:
			case <-time.After(m.grace):
				m.fsys.log.Warn("files still open after the grace period: aborting the connection", "dir", m.dir)
				if aerr := abortConn(m.dev); aerr != nil {
					return fmt.Errorf("unmount %s: %w", m.dir, aerr)
				}
			}
		}
	}
	if err != nil && m.dev != 0 {
		// The mountpoint is not ours any more (gone, or never finished
		// mounting): end the connection so Serve returns.
		if aerr := abortConn(m.dev); aerr == nil {
			err = nil
		}
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", m.dir, err)
	}
	<-m.done
	return nil
}
