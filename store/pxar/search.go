package pxar

// Lookup's walk of a goodbye table: a binary search tree of hashes stored
// as an implicit heap (children of i at 2i+1 and 2i+2), whose in-order
// sequence is sorted, so that items of equal hash are in-order neighbours.

// descend returns the index of the first item of hash h on the search
// path, or dir.count if there is none. Every item read must lie in the
// hash range its ancestors leave for it.
func (t *table) descend(h uint64) (uint64, error) {
	lo, hi := uint64(0), uint64(1<<64-1)
	i := uint64(0)
	for i < t.dir.count {
		it, err := t.item(i)
		if err != nil {
			return 0, err
		}
		switch {
		case it.hash < lo || it.hash > hi:
			return 0, t.unsorted(i)
		case h < it.hash:
			i, hi = 2*i+1, it.hash
		case h > it.hash:
			i, lo = 2*i+2, it.hash
		default:
			return i, nil
		}
	}
	return t.dir.count, nil
}

// equalRun decodes the entries of item i and of its in-order neighbours
// of the same hash and returns the one called *name (or nil). Two entries
// of that name are a duplicate; a neighbour on the wrong side of item i's
// hash is an unsorted table.
func (t *table) equalRun(i uint64, name *string) (*Entry, error) {
	it, err := t.item(i)
	if err != nil {
		return nil, err
	}
	found, err := t.a.child(t.dir, it, name)
	if err != nil {
		return nil, err
	}
	err = t.eachEqual(i, it.hash, func(n goodbyeItem) (bool, error) {
		e, err := t.a.child(t.dir, n, name)
		switch {
		case err != nil:
			return false, err
		case e != nil && found != nil:
			return false, duplicate(t.dir, *name)
		case e != nil:
			found = e
		}
		return true, nil
	})
	return found, err
}

// find returns the item of hash h whose entry is offset bytes before the
// GOODBYE item (an item's offset field); ok is false when the table lists
// none there.
func (t *table) find(h, offset uint64) (it goodbyeItem, ok bool, err error) {
	i, err := t.descend(h)
	if err != nil || i >= t.dir.count {
		return goodbyeItem{}, false, err
	}
	if it, err = t.item(i); err != nil || it.offset == offset {
		return it, err == nil, err
	}
	err = t.eachEqual(i, h, func(n goodbyeItem) (bool, error) {
		it, ok = n, n.offset == offset
		return !ok, nil
	})
	return it, ok && err == nil, err
}

// eachEqual calls visit with the in-order neighbours of item i that have
// its hash h, predecessors then successors, while visit returns true.
func (t *table) eachEqual(i, h uint64, visit func(goodbyeItem) (bool, error)) error {
	for _, side := range []int{-1, 1} {
		more, err := t.walkEqual(i, h, side, visit)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// walkEqual steps from item i through neighbours of hash h (side -1: to
// the predecessors, 1: to the successors) and visits those; more is false
// when visit stopped the walk.
func (t *table) walkEqual(i, h uint64, side int, visit func(goodbyeItem) (bool, error)) (more bool, err error) {
	a, b := uint64(1), uint64(2)
	if side > 0 {
		a, b = 2, 1
	}
	if 2*i+a >= t.dir.count {
		// No subtree on that side: the neighbour is an ancestor on the
		// search path, whose hash differs from h (descend stopped at the
		// first h), so nothing needs to be read.
		return true, nil
	}
	for j, ok := t.neighbour(i, a, b); ok; j, ok = t.neighbour(j, a, b) {
		n, err := t.item(j)
		if err != nil {
			return false, err
		}
		if (side < 0 && n.hash > h) || (side > 0 && n.hash < h) {
			return false, t.unsorted(j)
		}
		if n.hash != h {
			return true, nil
		}
		if more, err := visit(n); !more || err != nil {
			return false, err
		}
	}
	return true, nil
}

// pred is the index of item j's in-order predecessor.
func (t *table) pred(j uint64) (uint64, bool) { return t.neighbour(j, 1, 2) }

// succ is the index of item j's in-order successor.
func (t *table) succ(j uint64) (uint64, bool) { return t.neighbour(j, 2, 1) }

// neighbour is the index of item j's in-order neighbour on the side of
// child 2j+a (a, b: 1, 2 for the predecessor, 2, 1 for the successor):
// the outermost item of that subtree towards b, or else the parent of
// the first ancestor that is a b-child.
func (t *table) neighbour(j, a, b uint64) (uint64, bool) {
	n := t.dir.count
	if c := 2*j + a; c < n {
		for 2*c+b < n {
			c = 2*c + b
		}
		return c, true
	}
	for j >= a && (j-a)%2 == 0 { // an a-child: go up
		j = (j - a) / 2
	}
	if j == 0 {
		return 0, false
	}
	return (j - b) / 2, true
}

// unsorted is the error for a table whose item i breaks the order.
func (t *table) unsorted(i uint64) error {
	return corrupt(streamMeta, t.dir.goodbyeOfs, "goodbye table of directory %s is not sorted by hash (item %d)", t.dir.Path(), i)
}
