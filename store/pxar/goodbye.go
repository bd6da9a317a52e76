package pxar

import "slices"

type goodbyeItem struct {
	hash, offset, size uint64
}

// encodeGoodbye returns the GOODBYE item of a directory whose ENTRY is at
// entryOfs and whose goodbye table goes to gbOfs: items (offsets
// absolute) sorted by hash in binary search tree order, offsets relative
// to the GOODBYE item, then the tail item pointing back at the ENTRY.
// It sorts items in place.
func encodeGoodbye(items []goodbyeItem, entryOfs, gbOfs uint64) []byte {
	slices.SortFunc(items, func(a, b goodbyeItem) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return 0
	})
	size := uint64(HeaderSize + GoodbyeItemSize*(len(items)+1))
	b := make([]byte, size)
	putHeader(b, TypeGoodbye, size-HeaderSize)
	bstPermute(len(items), func(src, dst int) {
		it := items[src]
		o := HeaderSize + dst*GoodbyeItemSize
		le.PutUint64(b[o:], it.hash)
		le.PutUint64(b[o+8:], gbOfs-it.offset)
		le.PutUint64(b[o+16:], it.size)
	})
	o := HeaderSize + len(items)*GoodbyeItemSize
	le.PutUint64(b[o:], GoodbyeTailMarker)
	le.PutUint64(b[o+8:], gbOfs-entryOfs)
	le.PutUint64(b[o+16:], size)
	return b
}

// GoodbyeTable collects the entries of one directory for a reader that
// decodes a single-stream archive front to back (a tape snapshot
// archive) and checks the directory's GOODBYE item against what the
// Encoder writes for those entries.
type GoodbyeTable struct {
	items []goodbyeItem
}

// Add records the entry name whose FILENAME item starts at offset of the
// stream and that spans size bytes up to the end of its content.
func (t *GoodbyeTable) Add(name string, offset, size uint64) {
	t.items = append(t.items, goodbyeItem{hash: HashFilename(name), offset: offset, size: size})
}

// Len is the number of entries added.
func (t *GoodbyeTable) Len() int { return len(t.items) }

// Encode returns the GOODBYE item, header included, of the directory
// whose ENTRY is at entryOfs when the item is written at gbOfs.
func (t *GoodbyeTable) Encode(entryOfs, gbOfs uint64) []byte {
	return encodeGoodbye(slices.Clone(t.items), entryOfs, gbOfs)
}
