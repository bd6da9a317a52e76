package pxar

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// Checking a whole goodbye table without holding it. A table is a binary
// search tree stored as an implicit heap; its in-order sequence is sorted
// by hash, and in that sequence each level of the tree is visited front
// to back. So the check reads every level through a window of its own
// (dirBatch items), sequentially: memory grows with the number of levels
// (at most 64), never with the table.

// maxHashRun bounds the entries of one hash in a directory. An archive
// holds two names of one SipHash only by chance (about 2^-25 for a
// million names) or by crafting; every name of a run is compared with
// the others, so a crafted run costs that many names' decoding, at most.
const maxHashRun = 16

// listKey keys the sums that tell a directory's scanned entries from
// its goodbye table (tableSum): random for each process, so a crafted
// archive cannot make two different sets sum alike.
var listKey = func() (k [2]uint64) {
	var b [16]byte
	rand.Read(b[:])
	return [2]uint64{binary.LittleEndian.Uint64(b[:]), binary.LittleEndian.Uint64(b[8:])}
}()

// tableSum is the share of one entry in a directory's sum: the hash and
// offset its goodbye item records.
func tableSum(hash, offset uint64) uint64 { return sipHashWords(listKey[0], listKey[1], hash, offset) }

// levelWindows reads a goodbye table's items level by level.
type levelWindows struct {
	a    *Accessor
	dir  *Entry
	win  [][]byte // per level: items from[l]…, as stored
	from []uint64
}

// item returns item i, reading the next window of its level when i is
// past the current one (each level is asked for in increasing order).
func (w *levelWindows) item(i uint64) (goodbyeItem, error) {
	l := bits.Len64(i+1) - 1
	for len(w.win) <= l {
		w.win, w.from = append(w.win, nil), append(w.from, 0)
	}
	b, from := w.win[l], w.from[l]
	if i < from || i-from >= uint64(len(b))/GoodbyeItemSize {
		levelEnd := min(uint64(1)<<(l+1)-1, w.dir.count)
		n := min(dirBatch, levelEnd-i)
		if uint64(cap(b)) < n*GoodbyeItemSize {
			b = make([]byte, n*GoodbyeItemSize)
		}
		b = b[:n*GoodbyeItemSize]
		if err := w.a.meta.readAt(b, w.dir.goodbyeOfs+HeaderSize+i*GoodbyeItemSize); err != nil {
			return goodbyeItem{}, fmt.Errorf("directory %s: %w", w.dir.Path(), err)
		}
		w.win[l], w.from[l], from = b, i, i
	}
	return parseItem(b[(i-from)*GoodbyeItemSize:]), nil
}

// checkDir checks the whole goodbye table of dir, as checkTable does,
// reading it level by level, and returns the sum of its items' shares
// (tableSum).
func (a *Accessor) checkDir(ctx context.Context, dir *Entry) (uint64, error) {
	w := &levelWindows{a: a, dir: dir}
	return a.checkTable(ctx, dir, w.item, a.hashedName)
}

// checkTable checks the items of a whole goodbye table (item(i) returns
// item i in table order): every item points into the directory, the
// in-order sequence is sorted by hash, and the items of equal hash (then
// neighbours in that sequence) hold different names.
// Only those entries are decoded: for an archive without hash collisions
// checking costs one pass over the table. It returns the sum of the
// items' shares (tableSum). nameOf reads the name of an item's entry.
func (a *Accessor) checkTable(ctx context.Context, dir *Entry, item func(i uint64) (goodbyeItem, error),
	nameOf func(*Entry, goodbyeItem) (string, error)) (uint64, error) {
	var (
		prev  goodbyeItem
		run   []string // names of the run of prev's hash, once it has two items
		sum   uint64
		err   error
		count int
	)
	inOrder(int(dir.count), func(i int) bool {
		if count++; count%4096 == 0 {
			if err = ctx.Err(); err != nil {
				return false
			}
		}
		var it goodbyeItem
		if it, err = item(uint64(i)); err != nil {
			return false
		}
		if err = checkItemOffset(dir, it); err != nil {
			return false
		}
		sum += tableSum(it.hash, it.offset)
		switch {
		case count == 1:
		case it.hash < prev.hash:
			err = (&table{dir: dir}).unsorted(uint64(i))
		case it.hash == prev.hash:
			run, err = checkRun(dir, run, prev, it, nameOf)
		default:
			run = run[:0]
		}
		prev = it
		return err == nil
	})
	return sum, err
}

// checkRun adds item it to the run of items of its hash that prev ended
// (run holds their names; empty: prev began it) and fails if its name is
// among them or the run is too long.
func checkRun(dir *Entry, run []string, prev, it goodbyeItem, nameOf func(*Entry, goodbyeItem) (string, error)) ([]string, error) {
	if len(run) == 0 {
		name, err := nameOf(dir, prev)
		if err != nil {
			return run, err
		}
		run = append(run, name)
	}
	name, err := nameOf(dir, it)
	switch {
	case err != nil:
		return run, err
	case slices.Contains(run, name):
		return run, duplicate(dir, name)
	case len(run) >= maxHashRun:
		return run, corrupt(streamMeta, dir.goodbyeOfs, "goodbye table of directory %s has more than %d entries of hash %#x",
			dir.Path(), maxHashRun, it.hash)
	}
	return append(run, name), nil
}

// hashedName reads the name of the entry of goodbye item it, which must
// hash to the item's hash: a listing checks it (a lookup, which may find
// another name of that hash, decodes the one it finds and checks that).
func (a *Accessor) hashedName(dir *Entry, it goodbyeItem) (string, error) {
	name, err := a.itemName(dir, it)
	if err == nil && HashFilename(name) != it.hash {
		err = corrupt(streamMeta, dir.goodbyeOfs-it.offset, "directory %s: goodbye table hash %#x does not match name %q",
			dir.Path(), it.hash, name)
	}
	return name, err
}
