package fs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Split mode. A root mount is two kinds of FUSE mount: the store on a
// read-only superblock, and each extra root entry (.jobs) on its own
// read-write connection mounted over an empty directory of the first.
// The read-only superblock is what the speed of tar and cp -r needs: on a
// writable one the kernel forgets a file's atime after every read and
// asks for its attributes again at the next stat (one more request per
// file), and it answers every write with EROFS itself. The store's mount
// also runs in no-open mode (noopen.go), which would take the handles
// that .jobs' status files and control writes rely on. Without root
// (fusermount cannot mount over a read-only directory) or with
// Options.OneMount, everything is one read-write mount whose nodes refuse
// changes themselves.

// subMount is an extra root entry's own mount.
type subMount struct {
	dir    string
	dev    atomic.Uint64 // set once mounted; read by endSubs, which may run meanwhile
	server *fuse.Server
	done   chan struct{}
}

// mountSub mounts x over its directory in the store's mount.
func (m *Server) mountSub(opt Options, x RootEntry) error {
	dir := filepath.Join(m.dir, x.Name)
	mopts := m.mountOptions(opt, false)
	sub := &mountFS{s: m.fsys.s, timeout: m.fsys.timeout, log: m.fsys.log, owner: m.fsys.owner, started: m.fsys.started}
	server, err := fuse.NewServer(newRawFS(sub, newRawTable(x.New())), dir, &mopts)
	if err != nil {
		return mountError(dir, err)
	}
	sm := &subMount{dir: dir, server: server, done: make(chan struct{})}
	go func() {
		server.Serve()
		close(sm.done)
	}()
	m.subMu.Lock()
	m.subs = append(m.subs, sm)
	m.subMu.Unlock()
	if err := server.WaitMount(); err != nil {
		return mountError(dir, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return fmt.Errorf("mount %s: %w", dir, err)
	}
	sm.dev.Store(st.Dev)
	return nil
}

// unmountSubs unmounts the extra entries' mounts, before the store's.
func (m *Server) unmountSubs() error {
	for _, sm := range m.liveSubs() {
		if err := unmountServed(sm.dir, sm.dev.Load(), m.direct, m.grace, sm.done, m.fsys.log); err != nil {
			return err
		}
	}
	return nil
}

// endSubs ends the extra entries' mounts once the store's mount is gone
// (unmounted from outside, e.g. umount -l, which detaches them too).
func (m *Server) endSubs() {
	for _, sm := range m.liveSubs() {
		if err := unmountDir(sm.dir, true, m.direct); err != nil && sm.dev.Load() != 0 {
			abortConn(sm.dev.Load())
		}
		<-sm.done
	}
}

// liveSubs returns the extra entries' mounts still served.
func (m *Server) liveSubs() []*subMount {
	m.subMu.Lock()
	defer m.subMu.Unlock()
	var out []*subMount
	for _, sm := range m.subs {
		select {
		case <-sm.done:
		default:
			out = append(out, sm)
		}
	}
	return out
}

// mountsBelow returns the cairn mounts strictly below dir, deepest first.
func mountsBelow(dir string) []string {
	var out []string
	for _, mp := range cairnMounts() {
		if strings.HasPrefix(mp, strings.TrimSuffix(dir, "/")+"/") {
			out = append(out, mp)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	return out
}
