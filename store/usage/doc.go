// Package usage says what snapshots cost: per snapshot and per group, the
// bytes only it references (what forgetting it would free once garbage
// collection has run) and the bytes it shares with other snapshots, as
// `borg info` (deduplicated size) and `restic stats --mode raw-data` do;
// and, for a set of snapshots (a prune's plan), what removing them all
// would free, chunks shared only among them included.
//
// It owns that accounting, and the listing cairn du prints of it
// (Listing, as text or JSON). It reads the store only through it:
// snapshots are listed with Store.Walk,
// index files found with Store.SnapshotIndexFiles and opened with
// Store.OpenIndexFile (as garbage collection's mark does: every
// snapshot, finished or not, holds its chunks), and chunk sizes come
// from Store.StatChunk.
//
// # What is counted
//
// A chunk counts once per snapshot (and once per group), however often
// its indexes list it (an image's zero chunk, repeated data), with two
// sizes: logical, the plain bytes the index gives it, and stored, the
// size of its chunk file (compressed, as on disk; what garbage
// collection's "removed" counts). A missing chunk counts its logical
// size and no stored bytes, and is counted as missing. The snapshot
// directory's own files (indexes, blobs, the manifest) belong to that
// snapshot alone and are counted apart (Files): forgetting the snapshot
// removes them, garbage collection does not count them.
//
// On a store whose chunks are in a bucket, a chunk's stored size would
// cost a request per chunk: the stored sizes are left at zero and
// Report.StoredKnown is false; the logical sizes are complete.
//
// # Cost
//
// One pass over every index of every snapshot of the store (sharing is a
// property of the whole store, so a question about one snapshot reads
// them all), a few workers reading snapshots side by side and one
// goroutine merging their chunk lists in walk order, and one stat per
// distinct chunk. Memory is one map entry per distinct chunk referenced
// anywhere in the store: its 32-byte digest and an int32 in the map, a
// 24-byte record (first snapshot and group, last group, both sizes,
// flags) in a slice: 81 to 106 bytes per distinct chunk, measured at 1
// and 2 million (the map's and the slice's growth make the range), plus
// the chunk lists of the dozen or so snapshots in flight (36 bytes a
// reference), and a few hundred bytes per snapshot and group. That is bounded by the store's
// distinct chunks, not by its references: ten thousand snapshots of the
// same data cost what one does, while a store of 10 million distinct
// chunks (40 TiB of 4 MiB chunks) needs about a
// gigabyte. (Garbage collection's remote mark sorts digests on disk
// instead, store/digestsort; that bounds memory by a constant but
// would cost disk space per reference, since what is counted here is
// which snapshots share a chunk, not only whether one does.)
//
// # Hostile input
//
// An index that cannot be read (corrupt, truncated, changed while
// mapped) is reported with its snapshot and file in Snapshot.Err and
// Report.Errors, and the pass goes on: what others share with that index is then not seen,
// so their unique figures may be too high, which Report.Errors says. Nothing in an index can make the pass
// panic or allocate beyond its number of entries.
package usage
