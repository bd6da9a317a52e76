package pxar

// bstPermute calls place(src, dst) for each element of a sorted array of
// n elements, so that the array rearranged by it is a binary search tree
// stored as an implicit binary heap: the children of index i are 2i+1
// (smaller) and 2i+2 (larger). This is the layout of pxar's goodbye
// tables (casync's camakebst). It yields a complete tree whose last level
// is filled from the left.
func bstPermute(n int, place func(src, dst int)) {
	if n == 0 {
		return
	}
	e := 0
	for (n >> (e + 1)) != 0 {
		e++ // e = floor(log2(n))
	}
	bstPermuteInner(n, 0, e, 0, place)
}

// bstPermuteInner places the subtree for src[o:o+n] at heap index i; e is
// the height of that subtree's full part.
func bstPermuteInner(n, o, e, i int, place func(src, dst int)) {
	p := 1 << e
	t := p + p>>1 - 1
	// The left subtree takes all of the last level up to half of it,
	// i.e. the root is the element after the left subtree.
	m := p - 1
	if n <= t {
		m = p - 1 - (t - n)
	}
	place(o+m, i)
	if m > 0 {
		bstPermuteInner(m, o, e-1, 2*i+1, place)
	}
	if m+1 < n {
		bstPermuteInner(n-m-1, o+m+1, e-1, 2*i+2, place)
	}
}

// BSTPermute is bstPermute for writers of goodbye tables outside this
// package (test fixtures that craft archives the Encoder refuses).
func BSTPermute(n int, place func(src, dst int)) { bstPermute(n, place) }
