package pxar

import (
	"fmt"
	"strings"
)

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

// duplicate is the error for a name listed twice in one directory.
func duplicate(dir *Entry, name string) error {
	return &CorruptError{Stream: streamMeta, Offset: dir.goodbyeOfs,
		Msg: fmt.Sprintf("directory %s holds %q more than once", dir.Path(), name), Err: ErrDuplicate}
}

// itemName reads the FILENAME of the entry goodbye item it points to.
func (a *Accessor) itemName(dir *Entry, it goodbyeItem) (string, error) {
	return a.readItemName(dir, it, readName)
}

// rawItemName reads the FILENAME of the entry goodbye item it points to,
// whether or not its name is valid.
func (a *Accessor) rawItemName(dir *Entry, it goodbyeItem) (string, error) {
	return a.readItemName(dir, it, readRawName)
}

// readItemName reads the FILENAME of the entry goodbye item it points to
// with read.
func (a *Accessor) readItemName(dir *Entry, it goodbyeItem, read func(*cursor) (string, error)) (string, error) {
	if err := checkItemOffset(dir, it); err != nil {
		return "", err
	}
	c := newCursor(a.meta, dir.goodbyeOfs-it.offset, dir.goodbyeOfs)
	defer c.put()
	name, err := read(c)
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
