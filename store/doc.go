// Package store owns cairn's on-disk datastore, laid out as Proxmox Backup
// Server lays one out: the chunk directory (.chunks/xxxx/<digest>), fixed
// (.fidx) and dynamic (.didx) indexes, snapshots grouped by namespace,
// type and id, their manifests (index.json.blob), and the locks that keep
// writers, readers and garbage collection apart.
//
// Walk is the one way over namespaces, groups and snapshots: a Selector
// (parsed from a namespace and command-line references) names the
// snapshots, and every command and job that works on several of them
// ranges over Walk's sequence.
//
// A store logs through the *slog.Logger it is opened with (OpenWith's
// OpenOptions.Logger, Store.Logger), and so do its writers, its chunk
// cache and a remote store's bucket client; without one it logs nothing
// (never slog's default logger, whose second format a command's log
// would show beside its own).
//
// A listing of many snapshots reads their manifests through the snapshot
// index (snapindex*.go, .cairn-snapindex at the store's root), a cache that
// is never needed and never trusted beyond what it is checked against.
//
// # Two seams: Backend and MetaStore
//
// What depends on where a store lives sits behind two interfaces, each
// chosen once when the store is opened (store.go, remote.go), so that
// nothing outside them asks which kind of store it is and a new method
// of either is asked of both by the compiler. Every method of both takes
// the caller's context and returns an error; what only one side can do
// is an optional interface, looked up with a type assertion.
//
// Backend (backend.go), s.backend, is the chunks and the snapshot files
// as read: ReadChunk, InsertChunkParts, HasChunk (an error is a look
// that failed, never "missing"), TouchChunk, WalkChunks, StatChunk,
// MarkBad, ReadFile, OpenIndex. The local directory (localDir:
// local_read.go, local_chunks.go, local_chunkinfo.go) keeps its fast
// paths behind ChunkOptions: page-cached chunk files mapped (their
// faults turned into ErrChunkFault by Blob.Do), others read with
// O_DIRECT into reused aligned buffers. Its optional chunkFiles
// (ChunkDiskDir, ChunkSizeHint, PrefetchChunk) is what only files on a
// local disk allow; Prober (request concurrency, readahead, image chunk
// size, an upload without a second look) and Collecting (a
// ChunkCollector of its own) are what only a bucket needs. A dry run
// wraps the Backend (dryrun.go).
//
// MetaStore (meta.go), s.meta, is what a change to snapshot metadata does
// beyond the store's directory, which the store itself writes, locks
// and registers writers in: Publish (Backup.Finish), WriteManifest,
// UpdateManifest (the unprotected part), CommitManifest, Forget,
// CanForget, ForgetGroup, Protect, NameBase (a backup's base kept from
// forgets elsewhere), LockGroup (a lease beside the group's flock),
// RegisterWriter and ReleaseWriter (a lease beside the writer file),
// Refresh, RefreshGroup, Close. localMeta (meta.go) mostly does
// nothing more: the directory is all there is. Both kinds keep the
// snapshot index (snapindex*.go): a remote store's mirror changes only
// as the directory of a local store does (a refresh adds, replaces by
// rename and removes snapshot directories and files, and downloads
// only what changed), so the index's checks hold for it as they are.
//
// # The remote store, a package of its own
//
// The other side of both seams, a store whose chunks and snapshot files
// live in an S3 bucket, is package store/s3store, which imports this
// one. A store directory holding RemoteConfigName is opened the way that
// package registers (RegisterRemote, from its init, as a database/sql
// driver registers itself: remote.go); a program that opens stores
// imports it (cmd/cairn/cli does). What it needs of this package beyond the
// two interfaces is exported for it and kept small: the Remote its
// opener returns, BufBlob and ReadChunkFile (its on-disk chunk cache),
// LocalBackend (its mirror's files), DropSnapshotDir and
// DropEmptyGroupDir (mirror.go: what has left the bucket goes when
// nothing here uses it), CreateDir, the Backup's leases, and the
// sweep's counting (SweepCounts.Keep, GCCutoff, EntryKindOf). Helpers
// that need nothing of a store are in store/internal (fsutil,
// printable); the remote GC's external sort of digests is
// store/digestsort; the index formats (.fidx, .didx: opened mapped,
// written, copied) are store/index, which this package gives their
// meaning in a snapshot (a manifest's checksum and size, an encrypted
// snapshot's key: OpenSnapshotIndex, IndexKey).
//
// Reading an archive's data is store/chunkcache: a byte-bounded shared
// cache of decoded, digest-checked chunks and io.ReaderAt views of an
// index through it, which needs only a source of raw chunk blobs;
// NewCache (cachesource.go) makes one of a store's chunks (ReadChunk, with
// compressed blobs mapped).
//
// # Where the arguments are
//
// Why the store is sound is written out in docs/design/store.md: the
// snapshot index (what a mount may skip stat-ing), chunk memory, encrypted
// snapshots, and the rules that keep many hosts on one bucket consistent
// (rules 1-5 of the safety protocol, named by number in store/s3store's
// files). Garbage collection's argument is docs/design/gc.md.
package store
