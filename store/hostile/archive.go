package hostile

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/pxar"
)

// Node is one entry of a crafted archive. Nothing about it is checked:
// names may repeat, be empty or hold '/' and NUL, children are written in
// the order given, a hard link may record any path.
type Node struct {
	Name   string
	Kind   pxar.Kind
	Mode   uint64 // permission bits (the type bits follow from Kind)
	UID    uint32
	GID    uint32
	Mtime  int64
	Data   []byte      // regular file content
	Target string      // symbolic link target
	Dev    pxar.Device // device numbers (Kind device: a character device unless Block)
	Block  bool
	Link   string  // hard link (Kind file): the path it records
	LinkTo *Node   // hard link: the earlier node it points to (nil: itself, an invalid link)
	Kids   []*Node // directory entries, in stored order
	// Alias makes this node no entry of its own but a goodbye table item
	// pointing at an earlier written node (in a directory enclosing it,
	// for a reader to accept it): one entry listed by two directories.
	Alias *Node
}

// Shared is an item of a directory's table that lists node to, written
// earlier inside that directory, again (see Node.Alias).
func Shared(to *Node) *Node { return &Node{Name: to.Name, Kind: to.Kind, Alias: to} }

// SharedDirs is n nested directories d00/d01/…, each also listed (Shared)
// by every directory above its parent, the last holding a file "leaf":
// a walk that follows the listings makes 2^(n-2) visits of the last one.
func SharedDirs(n int) *Node {
	dirs := make([]*Node, n)
	for i := n - 1; i >= 0; i-- {
		dirs[i] = Dir(fmt.Sprintf("d%02d", i))
		if i+1 < n {
			dirs[i].Kids = append(dirs[i].Kids, dirs[i+1])
			for j := i + 2; j < n; j++ {
				dirs[i].Kids = append(dirs[i].Kids, Shared(dirs[j]))
			}
		}
	}
	dirs[n-1].Kids = append(dirs[n-1].Kids, File("leaf", "x"))
	return Dir("", dirs[0])
}

// Dir, File, Symlink and Hardlink are shorthands for nodes.
func Dir(name string, kids ...*Node) *Node {
	return &Node{Name: name, Kind: pxar.KindDir, Mode: 0o755, Kids: kids}
}

// File is a regular file holding data.
func File(name, data string) *Node {
	return &Node{Name: name, Kind: pxar.KindFile, Mode: 0o644, Data: []byte(data)}
}

// Symlink is a symbolic link to target.
func Symlink(name, target string) *Node {
	return &Node{Name: name, Kind: pxar.KindSymlink, Mode: 0o777, Target: target}
}

// Hardlink is a hard link to the node to (written earlier), recording
// path as its target's path.
func Hardlink(name, path string, to *Node) *Node {
	return &Node{Name: name, Kind: pxar.KindFile, Link: path, LinkTo: to}
}

func (n *Node) typeBits() uint64 {
	switch n.Kind {
	case pxar.KindDir:
		return pxar.ModeIFDIR
	case pxar.KindSymlink:
		return pxar.ModeIFLNK
	case pxar.KindDevice:
		if n.Block {
			return pxar.ModeIFBLK
		}
		return pxar.ModeIFCHR
	case pxar.KindFIFO:
		return pxar.ModeIFIFO
	case pxar.KindSocket:
		return pxar.ModeIFSOCK
	}
	return pxar.ModeIFREG
}

// Encode writes root (a directory; its Name is ignored) as a split pxar
// archive, byte for byte as pxar lays it out but without any of the
// encoder's checks: it returns the metadata and payload streams.
func Encode(root *Node) (meta, payload []byte) {
	w := &writer{offsets: map[*Node]uint64{}, sizes: map[*Node]uint64{}}
	putHeader(&w.payload, pxar.TypePayloadStartMarker, 0)
	w.u64Item(pxar.TypeFormatVersion, 2)
	w.dir(root, 0)
	putHeader(&w.payload, pxar.TypePayloadTailMarker, 0)
	return w.meta.Bytes(), w.payload.Bytes()
}

type writer struct {
	meta, payload bytes.Buffer
	offsets       map[*Node]uint64 // FILENAME offsets of the nodes written
	sizes         map[*Node]uint64 // their goodbye item sizes
}

type goodbyeItem struct{ hash, offset, size uint64 }

func putHeader(b *bytes.Buffer, typ, contentSize uint64) {
	var h [pxar.HeaderSize]byte
	binary.LittleEndian.PutUint64(h[0:], typ)
	binary.LittleEndian.PutUint64(h[8:], contentSize+pxar.HeaderSize)
	b.Write(h[:])
}

func (w *writer) item(typ uint64, parts ...[]byte) {
	var n int
	for _, p := range parts {
		n += len(p)
	}
	putHeader(&w.meta, typ, uint64(n))
	for _, p := range parts {
		w.meta.Write(p)
	}
}

func (w *writer) u64Item(typ uint64, vals ...uint64) {
	var b []byte
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	w.item(typ, b)
}

func (w *writer) stat(n *Node) {
	var st [40]byte
	binary.LittleEndian.PutUint64(st[0:], n.typeBits()|n.Mode&0o7777)
	binary.LittleEndian.PutUint32(st[16:], n.UID)
	binary.LittleEndian.PutUint32(st[20:], n.GID)
	binary.LittleEndian.PutUint64(st[24:], uint64(n.Mtime))
	w.item(pxar.TypeEntry, st[:])
}

func (w *writer) pos() uint64 { return uint64(w.meta.Len()) }

// dir writes directory n (its ENTRY at entryOfs) and returns the
// goodbye table items of its entries.
func (w *writer) dir(n *Node, entryOfs uint64) {
	w.stat(n)
	var items []goodbyeItem
	for _, k := range n.Kids {
		if k.Alias != nil {
			items = append(items, goodbyeItem{hash: pxar.HashFilename(k.Name), offset: w.offsets[k.Alias], size: w.sizes[k.Alias]})
			continue
		}
		fileOfs := w.pos()
		w.offsets[k] = fileOfs
		w.item(pxar.TypeFilename, []byte(k.Name), []byte{0})
		size := w.entry(k, fileOfs)
		w.sizes[k] = size
		items = append(items, goodbyeItem{hash: pxar.HashFilename(k.Name), offset: fileOfs, size: size})
	}
	w.goodbye(items, entryOfs)
}

// entry writes what follows the FILENAME item of n and returns the size
// its goodbye item records.
func (w *writer) entry(n *Node, fileOfs uint64) uint64 {
	switch {
	case n.Kind == pxar.KindDir:
		w.dir(n, w.pos())
		return w.pos() - fileOfs
	case n.Link != "" || n.LinkTo != nil:
		target, ok := w.offsets[n.LinkTo]
		if !ok {
			target = fileOfs
		}
		w.item(pxar.TypeHardlink, binary.LittleEndian.AppendUint64(nil, fileOfs-target), []byte(n.Link), []byte{0})
	default:
		w.stat(n)
		switch n.Kind {
		case pxar.KindFile:
			w.u64Item(pxar.TypePayloadRef, uint64(w.payload.Len()), uint64(len(n.Data)))
			putHeader(&w.payload, pxar.TypePayload, uint64(len(n.Data)))
			w.payload.Write(n.Data)
			return w.pos() - fileOfs + uint64(len(n.Data))
		case pxar.KindSymlink:
			w.item(pxar.TypeSymlink, []byte(n.Target), []byte{0})
		case pxar.KindDevice:
			w.u64Item(pxar.TypeDevice, n.Dev.Major, n.Dev.Minor)
		}
	}
	return w.pos() - fileOfs
}

// goodbye writes a directory's GOODBYE item: its items sorted by hash in
// binary search tree order, offsets back from the item, and the tail.
func (w *writer) goodbye(items []goodbyeItem, entryOfs uint64) {
	gbOfs := w.pos()
	slices.SortStableFunc(items, func(a, b goodbyeItem) int { return cmp.Compare(a.hash, b.hash) })
	size := uint64(pxar.HeaderSize + pxar.GoodbyeItemSize*(len(items)+1))
	table := make([]goodbyeItem, len(items))
	pxar.BSTPermute(len(items), func(src, dst int) { table[dst] = items[src] })
	var b []uint64
	for _, it := range table {
		b = append(b, it.hash, gbOfs-it.offset, it.size)
	}
	b = append(b, pxar.GoodbyeTailMarker, gbOfs-entryOfs, size)
	w.u64Item(pxar.TypeGoodbye, b...)
}

// Store writes a snapshot of s (in group g, at time at, which must be
// newer than the group's last) holding the split archive name (NAME.pxar: the
// files NAME.mpxar.didx and NAME.ppxar.didx) with the given streams,
// chunked and stored as a backup stores them.
func Store(ctx context.Context, s *store.Store, g store.Group, at time.Time, name string, meta, payload []byte) (store.Snapshot, error) {
	b, err := s.StartBackup(ctx, g, at)
	if err != nil {
		return store.Snapshot{}, err
	}
	b.Sync = store.SyncNone
	base := name[:len(name)-len(filepath.Ext(name))]
	for _, f := range []struct {
		name string
		data []byte
	}{{base + ".mpxar.didx", meta}, {base + ".ppxar.didx", payload}} {
		if err := storeStream(ctx, b, f.name, f.data); err != nil {
			b.Abort()
			return store.Snapshot{}, err
		}
	}
	if err := b.Finish(); err != nil {
		return store.Snapshot{}, err
	}
	return b.Snapshot(), nil
}

func storeStream(ctx context.Context, b *store.Backup, name string, data []byte) error {
	w, err := filearchive.NewStreamWriter(ctx, b.Store(), filepath.Join(b.Dir(), name), filearchive.StreamOptions{Workers: 1})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	csum, size, err := w.Close()
	if err != nil {
		return fmt.Errorf("hostile: store %s: %w", name, err)
	}
	return b.AddFile(store.FileInfo{Filename: name, Size: uint64(size), Csum: store.CsumHex(csum)})
}
