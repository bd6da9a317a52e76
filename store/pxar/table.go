package pxar

import (
	"context"
	"fmt"
	"strings"
)

// tablePrealloc bounds how many goodbye items (24 bytes each) a listing
// allocates ahead of reading them: a table's count is only a claim of the
// stream (whose size an index may claim too), so a larger table's memory
// grows with what was actually read.
const tablePrealloc = 1 << 17

// minEntrySize is the smallest a directory's entry can be: a FILENAME of
// one byte and its NUL, then a HARDLINK of an offset and a one-byte path.
const minEntrySize = HeaderSize + 2 + HeaderSize + 8 + 2

// checkCount bounds the number of goodbye items of directory e by what its
// content between its ENTRY and its GOODBYE item can hold.
func checkCount(e *Entry) error {
	if room := (e.goodbyeOfs - e.dirContent) / minEntrySize; e.count > room {
		return corrupt(streamMeta, e.goodbyeOfs, "goodbye table of directory %s lists %d entries, its %d bytes hold at most %d",
			e.Path(), e.count, e.goodbyeOfs-e.dirContent, room)
	}
	return nil
}

// loadTable reads the whole goodbye table of dir and checks it: sorted as
// a binary search tree by hash, no two entries of the same name. The
// items are returned in table order.
func (a *Accessor) loadTable(ctx context.Context, dir *Entry) ([]goodbyeItem, error) {
	items := make([]goodbyeItem, 0, min(dir.count, tablePrealloc))
	buf := make([]byte, min(dir.count, dirBatch)*GoodbyeItemSize)
	for i := uint64(0); i < dir.count; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(dirBatch, dir.count-i)
		b := buf[:n*GoodbyeItemSize]
		if err := a.meta.readAt(b, dir.goodbyeOfs+HeaderSize+i*GoodbyeItemSize); err != nil {
			return nil, fmt.Errorf("directory %s: %w", dir.Path(), err)
		}
		for k := uint64(0); k < n; k++ {
			it := parseItem(b[k*GoodbyeItemSize:])
			if err := checkItemOffset(dir, it); err != nil {
				return nil, err // fail at the first bad item, not after reading them all
			}
			items = append(items, it)
		}
		i += n
	}
	if err := a.checkTable(dir, len(items), func(i int) goodbyeItem { return items[i] }); err != nil {
		return nil, err
	}
	return items, nil
}

// checkTable checks the n items of a whole goodbye table, given in table
// order (a binary search tree stored as an implicit heap): they must be
// sorted by hash in the tree's in-order sequence, and entries of equal
// hash, which are then neighbours in that sequence, must have different
// names. Only those entries are decoded: for an archive without hash
// collisions, checking costs one pass over the table.
func (a *Accessor) checkTable(dir *Entry, n int, item func(i int) goodbyeItem) error {
	var prev goodbyeItem
	first := true
	var err error
	inOrder(n, func(i int) bool {
		it := item(i)
		switch {
		case first:
			first = false
		case it.hash < prev.hash:
			err = (&table{dir: dir}).unsorted(uint64(i))
		case it.hash == prev.hash:
			err = a.checkPair(dir, prev, it)
		}
		prev = it
		return err == nil
	})
	return err
}

// inOrder calls visit with the indexes of an n-item implicit binary tree
// in in-order sequence until visit returns false.
func inOrder(n int, visit func(i int) bool) {
	var stack [64]int
	sp := 0
	i := 0
	for i < n || sp > 0 {
		for i < n {
			stack[sp] = i
			sp++
			i = 2*i + 1
		}
		sp--
		i = stack[sp]
		if !visit(i) {
			return
		}
		i = 2*i + 2
	}
}

// checkPair decodes the names of two goodbye items of equal hash and
// fails if they are the same name.
func (a *Accessor) checkPair(dir *Entry, x, y goodbyeItem) error {
	nx, err := a.itemName(dir, x)
	if err != nil {
		return err
	}
	ny, err := a.itemName(dir, y)
	if err != nil {
		return err
	}
	if nx == ny {
		return duplicate(dir, nx)
	}
	return nil
}

// duplicate is the error for a name listed twice in one directory.
func duplicate(dir *Entry, name string) error {
	return &CorruptError{Stream: streamMeta, Offset: dir.goodbyeOfs,
		Msg: fmt.Sprintf("directory %s holds %q more than once", dir.Path(), name), Err: ErrDuplicate}
}

// itemName reads the FILENAME of the entry goodbye item it points to.
func (a *Accessor) itemName(dir *Entry, it goodbyeItem) (string, error) {
	if err := checkItemOffset(dir, it); err != nil {
		return "", err
	}
	c := newCursor(a.meta, dir.goodbyeOfs-it.offset, dir.goodbyeOfs)
	defer c.put()
	name, err := readName(c)
	if err != nil {
		return "", fmt.Errorf("directory %s: %w", dir.Path(), err)
	}
	return name, nil
}

// checkItemOffset checks that a goodbye item points into its directory.
func checkItemOffset(dir *Entry, it goodbyeItem) error {
	if it.offset == 0 || it.offset > dir.goodbyeOfs-dir.dirContent {
		return corrupt(streamMeta, dir.goodbyeOfs, "goodbye item offset %d outside its directory %s [%d, %d)",
			it.offset, dir.Path(), dir.dirContent, dir.goodbyeOfs)
	}
	return nil
}

// Path is the entry's path from the archive root ("/" for the root), as
// far as the entry was reached by lookups and listings of this Accessor.
func (e *Entry) Path() string {
	if e.parent == nil {
		if e.Name == "" {
			return "/"
		}
		return e.Name
	}
	var names []string
	for p := e; p != nil && p.Name != ""; p = p.parent {
		names = append(names, p.Name)
	}
	var b strings.Builder
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(names[i])
	}
	return b.String()
}
