package fs

import "syscall"

// The raw table's index: (tree, entry ID, file type) -> slot, by open
// addressing with linear probing (slot+1 per bucket, 0 empty), at most
// half full, shrunk when an eighth full, so that it costs about 8 bytes
// per looked-up entry and gives its memory back when they are forgotten.
// An entry found again (a hard link, a lookup after the entry timeout, a
// listing of a directory already looked up) gets the slot the kernel
// knows.

const minIndex = 64

func slotHash(tree uint32, id uint64) uint64 {
	h := id ^ uint64(tree)<<40 ^ 0x9e3779b97f4a7c15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

func (t *rawTable) matches(s uint32, tree uint32, id uint64, mode uint32) bool {
	sl := t.slot(s)
	return sl.tree == tree && sl.id == id && sl.mode&syscall.S_IFMT == mode&syscall.S_IFMT
}

// find returns the slot of (tree, id) with mode's file type.
func (t *rawTable) find(tree uint32, id uint64, mode uint32) (uint32, bool) {
	if len(t.index) == 0 {
		return 0, false
	}
	mask := uint64(len(t.index) - 1)
	for i := slotHash(tree, id) & mask; ; i = (i + 1) & mask {
		b := t.index[i]
		if b == 0 {
			return 0, false
		}
		if t.matches(b-1, tree, id, mode) {
			return b - 1, true
		}
	}
}

// insert adds slot s (its tree and id set), growing the index first
// when it would be over half full.
func (t *rawTable) insert(s uint32) {
	if (t.live)*2 > int64(len(t.index)) {
		t.rehash(max(minIndex, 2*len(t.index)))
	}
	t.place(s)
}

func (t *rawTable) place(s uint32) {
	sl := t.slot(s)
	mask := uint64(len(t.index) - 1)
	i := slotHash(sl.tree, sl.id) & mask
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = s + 1
}

// remove takes slot s (still set) out of the index, shifting back the
// entries after it that would no longer be found.
func (t *rawTable) remove(s uint32) {
	sl := t.slot(s)
	mask := uint64(len(t.index) - 1)
	i := slotHash(sl.tree, sl.id) & mask
	for t.index[i] != s+1 {
		if t.index[i] == 0 {
			return // not indexed: nothing to do
		}
		i = (i + 1) & mask
	}
	for j := (i + 1) & mask; t.index[j] != 0; j = (j + 1) & mask {
		o := t.slot(t.index[j] - 1)
		h := slotHash(o.tree, o.id) & mask
		// the entry at j may move to the hole at i unless its home h
		// lies cyclically in (i, j]
		if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
			t.index[i] = t.index[j]
			i = j
		}
	}
	t.index[i] = 0
	if n := len(t.index); n > minIndex && (t.live-1)*8 < int64(n) {
		t.rehash(n / 2)
	}
}

// rehash makes an index of n buckets of the indexed slots.
func (t *rawTable) rehash(n int) {
	old := t.index
	t.index = make([]uint32, n)
	for _, b := range old {
		if b != 0 {
			t.place(b - 1)
		}
	}
}
