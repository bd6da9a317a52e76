package layout

import (
	"hash/fnv"
	"syscall"
	"time"
)

// Permission bits of what the mount shows (it is read-only).
const (
	ModeDir  = syscall.S_IFDIR | 0o555
	ModeLink = syscall.S_IFLNK | 0o777
)

// Latest is the symlink in each group to its newest finished snapshot.
const Latest = "latest"

// Kind is what an entry of the layout is, and so which node the mount
// makes of it.
type Kind uint8

const (
	// KindDir is a directory of the layout (a namespace, the "ns" list of
	// one, a backup type, a group, a snapshot): Entry.Dir lists it.
	KindDir Kind = iota + 1
	// KindLatest is a group's latest symlink: Entry.Target.
	KindLatest
	// KindFile is an archive shown as one regular file (an image, a blob,
	// other data kept in one index): Entry.Archive.
	KindFile
	// KindTree is a file archive's root directory: Entry.Archive. Its
	// attributes are the root's once known (Archive.Root), the entry's
	// placeholder until then.
	KindTree
	// KindMount is an entry of the mount itself (.stats, .jobs), which
	// the mount adds to its root (Dir.Add) and makes the node of; it lives
	// as long as the mount.
	KindMount
)

// Entry is one name of a directory of the layout: what it is, the
// attributes the model gives it and an identity for its inode number.
type Entry struct {
	Name  string
	Kind  Kind
	Mode  uint32 // st_mode: type and permission bits (a KindTree's placeholder)
	Ino   uint64 // inode number: a hash of the entry's path in the store (Ino)
	Size  uint64
	Mtime time.Time

	Target  string   // KindLatest: the snapshot directory it points to
	Archive *Archive // KindFile, KindTree: the archive of its snapshot
	dir     func() *Dir
}

// Dir returns the model of a KindDir entry's directory, made anew by each
// call (a mount calls it once per node); nil for other kinds.
func (e Entry) Dir() *Dir {
	if e.dir == nil {
		return nil
	}
	return e.dir()
}

// Lazy tells whether the entry's attributes are a placeholder whose real
// values cost a load: a file archive's root not read yet by this mount
// or one before it.
func (e Entry) Lazy() bool {
	return e.Kind == KindTree && e.Archive.Root() == nil
}

// Ino derives a stable inode number from a path in the store (or a path
// plus an archive-internal id). 0, 1 (FUSE's root) and ^0 (reserved by
// go-fuse) are never returned.
func Ino(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	ino := h.Sum64()
	if ino <= 1 || ino == ^uint64(0) {
		ino += 2
	}
	return ino
}
