// Package digestsort is an external sort of chunk digests on the local
// disk, so that its memory is bounded whatever the number of digests: the
// remote garbage collection's set of marked chunks.
//
// Digests are appended to an in-memory run of fixed size; a full run is
// sorted, its duplicates dropped, and written to a run file; when a
// fan-in of run files exist they are merged into one (dropping
// duplicates again), so the files open at once stay bounded too. At the
// end a k-way merge of the runs (Merge) yields every digest once, in
// ascending order (Compare): the order of a bucket's chunk keys.
package digestsort
