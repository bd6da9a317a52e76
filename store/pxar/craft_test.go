package pxar

import (
	"cmp"
	"slices"
)

// craft is an entry of a hand-made archive: a file (data), a symlink
// (target), or a directory (dir non-nil). The encoder refuses duplicate
// and invalid names; crafted archives carry them.
type craft struct {
	name   string
	data   string
	target string
	dir    []craft
	hash   uint64 // goodbye hash to record; 0: the name's
}

// craftOpts are the ways a crafted goodbye table may be wrong.
type craftOpts struct {
	unsorted bool // table items in entry order, not as a search tree
	// root, if set, changes the root's table items (offsets from the
	// archive's start, sizes) before they are written.
	root func([]goodbyeItem) []goodbyeItem
}

// craftArchive returns a single-stream (version 1 layout) archive whose
// root holds entries, in the given order.
func craftArchive(entries []craft, o craftOpts) []byte {
	b := appendMetadata(nil, &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}})
	return craftChildren(b, 0, entries, o)
}

func craftChildren(b []byte, entryOfs int, entries []craft, o craftOpts) []byte {
	var items []goodbyeItem
	for _, e := range entries {
		fileOfs := len(b)
		b = appendItem(b, TypeFilename, []byte(e.name), []byte{0})
		switch {
		case e.dir != nil:
			at := len(b)
			b = appendMetadata(b, &Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755}})
			b = craftChildren(b, at, e.dir, o)
		case e.target != "":
			b = appendMetadata(b, &Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}})
			b = appendItem(b, TypeSymlink, []byte(e.target), []byte{0})
		default:
			b = appendMetadata(b, &Metadata{Stat: Stat{Mode: ModeIFREG | 0o644}})
			b = appendItem(b, TypePayload, []byte(e.data))
		}
		h := cmp.Or(e.hash, HashFilename(e.name))
		items = append(items, goodbyeItem{hash: h, offset: uint64(fileOfs), size: uint64(len(b) - fileOfs)})
	}
	if o.root != nil && entryOfs == 0 {
		items = o.root(items)
	}
	gb := uint64(len(b))
	for i := range items {
		items[i].offset = gb - items[i].offset
	}
	table := items
	if !o.unsorted {
		slices.SortStableFunc(items, func(x, y goodbyeItem) int { return cmp.Compare(x.hash, y.hash) })
		table = make([]goodbyeItem, len(items))
		bstPermute(len(items), func(src, dst int) { table[dst] = items[src] })
	}
	size := uint64(HeaderSize + (len(table)+1)*GoodbyeItemSize)
	var h [HeaderSize]byte
	putHeader(h[:], TypeGoodbye, size-HeaderSize)
	b = append(b, h[:]...)
	for _, it := range append(table, goodbyeItem{GoodbyeTailMarker, gb - uint64(entryOfs), size}) {
		b = le.AppendUint64(b, it.hash)
		b = le.AppendUint64(b, it.offset)
		b = le.AppendUint64(b, it.size)
	}
	return b
}
