// Package gc is the garbage collector of a store (the gc job kind,
// Kind, whose key=value parameters ParseParams reads into Options, and
// Run for callers outside the job manager): it removes the chunk files
// no snapshot references any more, as Proxmox Backup Server does, in two
// phases, and saves its Report in the store (.gc-status, ReadStatus).
//
// The package owns the orchestration: the job lock, the phases, the
// walk over every index of every snapshot on a pool of workers with the
// touched-digest cache, progress, the report and its status file. What
// depends on where the chunks live is the store's ChunkCollector (one
// per run): how the cutoff's clocks are read (Begin), how a referenced
// chunk is marked (MarkChunk), and the sweep. A local store's collector
// is described below (atime marks, prefix-directory sweep); a remote
// store's (chunks in an S3 bucket) is described, with its full safety
// argument, in package store's remote_gc.go, and summed up at the end.
//
//   - Before phase 1: one GC per store (LockJob("gc"); the job manager
//     takes it for the gc kind); leftovers of killed forgets are removed
//     (Store.CleanTrash); the atime self-test (Store.CheckAtime: a test
//     file's atime is set two days back, then touched with utimensat,
//     atime only, and read back) must pass, or GC stops with a message
//     and removes nothing. The touched atime is phase 1's start, T1, in
//     the file system's own clock. Then the oldest running writer's start
//     W is read (Store.OldestWriter).
//   - Phase 1 (mark.go): every index (.fidx, .didx) of every snapshot
//     directory of every namespace, finished or not (an unfinished one's
//     indexes are found by listing its directory), is read on a bounded
//     pool of workers, and every chunk it references is touched
//     (utimensat, atime only), skipping the digests a fixed-size cache of
//     recently touched ones holds (cache.go; whole digests, so a hit is
//     never another chunk). The touch (Store.MarkChunk) never follows a
//     symbolic link. A referenced chunk that is missing is counted
//     and named in the log (the first 100), and its .bad copies and any
//     copy a killed sweep set aside are touched instead, as PBS touches
//     .bad copies.
//   - Phase 2 (store's gc_local_sweep.go): the 65,536 prefix
//     directories are listed on a bounded pool; a chunk or .bad file whose atime is older than the
//     cutoff is removed, a temporary file of a writer (<digest>.tmp_*)
//     last changed before the cutoff is removed, and files a killed sweep
//     set aside are removed or put back. Kept files newer than the cutoff
//     but older than T1 are "pending": a later GC removes them.
//
// # The cutoff
//
// cutoff = min(T1 − atime-cutoff, W + skew − 5 min), where the second
// term counts only while a writer runs and skew (T1 less the local clock
// just before the test touch) moves W, taken from the local clock, into
// the file system's. The default atime-cutoff is PBS's 24 h 5 min; 0 is
// allowed. PBS computes min_atime = T1 − cutoff and, only when W is older
// than that, W − 300 s; here the margin applies to W whenever W bounds
// the cutoff at all (a writer that started within 5 minutes after
// T1 − cutoff gets its full margin too). The margin is not subtracted
// from T1 − atime-cutoff: PBS does not either (its default already holds
// the 5 minutes), and --atime-cutoff 0 must reclaim what a prune just
// released. Subtracting nothing is safe there because T1 is read from
// the file system's timestamps, not from the process clock: every touch
// after the self-test, whatever the coarseness of kernel timestamps,
// reads no earlier than T1. (PBS takes T1 from the process clock: a
// chunk touched by phase 1 a jiffy "before" T1, or a network file system
// whose server stamps times behind the client's, makes its atime look
// older than the cutoff; measuring T1 on the file system avoids both.)
//
// # Why nothing in use is removed
//
// A chunk file is removed only when its atime, read again after it was
// renamed aside (see below), is older than the cutoff. Take a chunk C
// that a snapshot S needs after the GC:
//
//  1. S's index existed when phase 1 listed S's directory (S finished,
//     or S unfinished but written by a backup that died; or S written by
//     a running backup whose index was already renamed into place). Phase
//     1 touched C after T1 (or the cache skipped C because phase 1 itself
//     touched it after T1), so C's atime ≥ T1 ≥ cutoff: kept. An index
//     phase 1 cannot read stops the GC before phase 2 (ErrBadIndex), as
//     PBS does: a chunk only that index references would look unused.
//     Indexes that vanish while listed (their snapshot was forgotten) are
//     passed over, as PBS does.
//  2. S is written by a backup B that did not exist at T1: B registers as
//     a writer before it looks at any chunk, and touches or writes every
//     chunk it references, including those it takes from the previous
//     snapshot without reading them. All of this happens after B
//     registered, and B registered after GC read the writers, which is
//     after T1: C's atime ≥ T1 ≥ cutoff.
//  3. S is written by a backup B running at T1: then W ≤ B's start, and
//     everything B touched or wrote has an atime ≥ B's start > cutoff
//     (5 minutes of margin for coarse timestamps and clock differences).
//  4. The remaining race: B looks C up (it exists, old atime), the sweep
//     lists C as old, and B touches C just before the sweep unlinks it.
//     PBS excludes this with a mutex between its insert and its sweep,
//     which works inside one process only. Here the sweep renames C to a
//     hidden name (.<digest>.gc) first, then reads the renamed file's
//     atime again: a touch that came before the rename shows, and C is
//     put back (RENAME_NOREPLACE; if B meanwhile stored C anew, the set
//     aside copy is dropped); a touch after the rename finds no file, and
//     B stores C again or fails; it never writes a manifest naming a
//     missing chunk. The rename is the point after which no one but this
//     GC can reach the old file.
//
// # Killed at any point
//
// Phase 1 only touches atimes: killed there, nothing is removed, and the
// next GC marks again. Phase 2 removes only garbage; killed between a
// rename aside and its unlink or rename back, a file stays under its
// hidden name, which no reader needs when the chunk was garbage. In the
// one case it is not (a backup touched C in the microseconds between the
// listing and the rename, and GC was killed before it put C back), the
// next GC's phase 1 finds C missing, touches the hidden copy, and its
// phase 2 puts it back before anything else in that directory; until
// then readers (the mount, restore, verify) find C under its hidden name
// when it is missing under its own (Store.ReadChunk), so the store
// verifies in between too. Removals
// are unlinks of single files, so the store stays a valid datastore;
// the report is written by rename at the end, so a killed GC leaves the
// previous one.
//
// # A remote store
//
// Chunks in a bucket have no atime: a chunk object's age is its
// LastModified (the server's time of its upload, or of a Touch, a copy
// onto itself). Begin takes the bucket's GC lease (one GC per bucket,
// whatever host runs it; a second is refused with ErrLocked); its server
// creation time S is phase 1's start; the oldest live writer lease's
// start W bounds the cutoff: cutoff = min(S, W) − atime-cutoff, and no
// later than W − WriterMargin. The mirror of the snapshots is refreshed
// from the bucket and the index objects it does not hold (snapshots with
// no manifest) are read from the bucket. Phase 1 marks each referenced
// digest into a sorted set on the local disk (an external sort: memory
// bounded whatever the number of chunks); the lease then says "sweep",
// and phase 2 lists the bucket's chunks in key (= digest) order beside
// the set, deleting in batches the unmarked ones older than the cutoff;
// marked digests with no object are the missing chunks. Nothing in use
// is deleted because every time compared is the server's and: a chunk
// of a snapshot whose manifest was in the bucket at the refresh is
// marked; any other snapshot's writer held a writer lease live at the
// listing or started later, so what it uploaded or touched is newer than
// the cutoff, what it took from its base is marked (a base cannot be
// forgotten under a live writer), and a chunk it touched after the sweep
// listed it is one it waits for: it reads the lease after its touch,
// finds "sweep", waits until this GC's lease is gone and uploads the
// chunk again if it was deleted. Deletes are sent only while the lease
// is held, each batch within a quarter of its TTL.
//
// Memory is bounded: the cache holds DefaultCacheEntries digests (32
// MiB), index files are mapped and read in ranges, and the sweep holds
// one prefix directory's listing per worker.
package gc
