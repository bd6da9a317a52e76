package fs

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Node is a node of the mount that a RootEntry supplies (JobsEntry's
// .jobs); only this package makes them.
type Node interface{ vnode }

// fixedDir is a directory whose entries are fixed when it is made (.jobs
// and its kinds, the empty directories split mode mounts .jobs over).
type fixedDir struct {
	ino  uint64
	fill func(out *fuse.Attr, mode uint32) // its attributes
	kids []fixedKid
}

// fixedKid is an entry of a fixedDir.
type fixedKid struct {
	name string
	ino  uint64
	mode uint32 // file type
	n    vnode
}

var _ dirNode = (*fixedDir)(nil)

// add adds entry name, node n of inode ino.
func (d *fixedDir) add(name string, ino uint64, n vnode) {
	mode := uint32(syscall.S_IFREG)
	if _, ok := n.(dirNode); ok {
		mode = syscall.S_IFDIR
	}
	d.kids = append(d.kids, fixedKid{name: name, ino: ino, mode: mode, n: n})
}

func (d *fixedDir) getattr(_ *call, out *fuse.AttrOut) syscall.Errno {
	d.fill(&out.Attr, syscall.S_IFDIR|0o555)
	out.Ino = d.ino
	return 0
}

// lookup answers with the child's own attributes and their timeout (a
// status file's expire at once: its size is that of the current text).
func (d *fixedDir) lookup(c *call, name string, out *fuse.EntryOut, _ bool) syscall.Errno {
	for _, k := range d.kids {
		if k.name == name {
			var ao fuse.AttrOut
			if e := k.n.getattr(c, &ao); e != 0 {
				return e
			}
			id, _, e := c.w.lookupObj(c.id, k.ino, k.mode, func() vnode { return k.n })
			if e != 0 {
				return e
			}
			c.w.objEntryOut(id, k.ino, k.mode, &ao, out)
			return 0
		}
	}
	return syscall.ENOENT
}

func (d *fixedDir) opendir(*call) (*listHandle, uint32, syscall.Errno) {
	return listOf(d, d.list), 0, 0
}

func (d *fixedDir) list(*call) ([]fuse.DirEntry, syscall.Errno) {
	es := make([]fuse.DirEntry, 0, len(d.kids))
	for _, k := range d.kids {
		es = append(es, fuse.DirEntry{Name: k.name, Ino: k.ino, Mode: k.mode})
	}
	return es, 0
}

// placeholders stands in for the extra entries in the store's mount: the
// empty directories they are mounted over (submount.go).
func (f *mountFS) placeholders(extra []RootEntry) []RootEntry {
	out := make([]RootEntry, len(extra))
	for i, x := range extra {
		ino := inoOf(x.Name)
		out[i] = RootEntry{Name: x.Name, Mode: syscall.S_IFDIR, New: func() Node { return f.emptyDir(ino) }}
	}
	return out
}

// emptyDir is a read-only directory without entries, inode ino.
func (f *mountFS) emptyDir(ino uint64) *fixedDir {
	return &fixedDir{ino: ino, fill: func(out *fuse.Attr, mode uint32) {
		*out = f.makeAttr(mode, ino, 0, f.started)
	}}
}
