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
// A listing of many snapshots reads their manifests through the snapshot
// index (snapindex.go, .cairn-snapindex at the store's root): a cache of
// each finished snapshot's ManifestSummary, an entry used only while the
// manifest file is the one it was made from (inode, size, mtime and
// ctime, from the stat Snapshots makes anyway) and made only of a
// manifest older than a clock tick or two. It is never needed: a file
// that does not decode or is not the user's own is ignored and rebuilt,
// and a store the user cannot write lists without it. A mount keeps
// there too, checked the same way, each plain snapshot's listing
// (SnapListing: archive names, kinds, sizes, a blob's decoded size, a
// file archive's root attributes once opened, an image's bytes of data
// outside zero chunks once counted; ListingIndex,
// snapindex_mount.go), so that listing a snapshot and stat-ing its
// archives opens neither the manifest nor an archive.
//
// A mount's group listing (MountSnapshots, snapindex_group.go) goes one
// step further and makes no stat of a finished snapshot at all while its
// group's directory is unchanged: each entry records the group
// directory's inode, mtime and ctime (only once that ctime is older than
// the settle time) and the snapshot directory's d_ino (from the group's
// getdents) when a stat last matched its manifest. This is sound because
// what a mount shows of a finished snapshot (that it is finished, its
// archives, their sizes, root attributes and data, the last two read
// from indexes the manifest's checksums pin) is the manifest's protected
// part, which cairn never rewrites for the life of the snapshot's
// directory (notes and verify state are in the unprotected part:
// UpdateManifest), and no cairn command removes a manifest from its
// directory; every add, remove or rename of a snapshot directory
// (backup, forget's rename-then-remove, prune, sync, tape restore)
// moves the group directory's mtime and ctime, so a directory removed
// and made again under the same name (perhaps with the same inode) is
// stat'ed again. Unfinished snapshots and names the entry does not vouch
// for are stat'ed as Snapshots does. What this gives up: a manifest
// replaced or deleted by hand inside its snapshot directory is listed
// as it was until the group changes (or the index is removed); reads go
// through the manifest (read and checked at the first open) and fail
// cleanly. A forged entry can at most list a snapshot directory of the
// group (names come from getdents, never from the index) as finished,
// with archive names the index checks; it cannot name a file to read.
// `cairn snapshots` (notes, verify state, protection) keeps the
// per-manifest check.
//
// # Two seams: Backend and metaStore
//
// What depends on where a store lives sits behind two interfaces, each
// chosen once when the store is opened (store.go, remote_store.go), so that
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
// local disk allow; a bucket's (remoteChunks) optional probing (request
// concurrency, readahead, image chunk size, an upload without a second
// look) and collecting (its own ChunkCollector) are what only a bucket
// needs. A dry run wraps the Backend (dryrun.go).
//
// metaStore (meta.go), s.meta, is what a change to snapshot metadata does
// beyond the store's directory, which the store itself writes, locks
// and registers writers in: Publish (Backup.Finish), WriteManifest,
// UpdateManifest (the unprotected part), CommitManifest, Forget,
// CanForget, ForgetGroup, Protect, NameBase (a backup's base kept from
// forgets elsewhere), LockGroup (a lease beside the group's flock),
// RegisterWriter and ReleaseWriter (a lease beside the writer file),
// Refresh, RefreshGroup, Close. localMeta (meta.go) mostly does
// nothing more: the directory is all there is; remoteMeta
// (remote_metastore.go) keeps the bucket in step by the rules below.
// The snapshot index is the local side's optional snapIndexer: a remote
// store's mirror changes under every refresh and keeps none.
//
// It also owns reading: a byte-bounded shared cache of decoded,
// digest-checked chunks (Cache) and io.ReaderAt views of an index through
// that cache (IndexReader), the seam between the store and everything
// that reads archives.
//
// # Chunk memory
//
// Chunks are read and decoded into buffers the cache recycles
// (chunkbuf.go), in size classes of a power of two from 256 KiB to
// 16 MiB (an image's 4 MiB chunks, a file archive's dynamic ones, mostly
// 1-2 MiB): memory never touched before costs a page fault per 4 KiB,
// which on a VM was half of a mount's CPU and a tenth of a tree
// restore's. Every
// holder of a cached chunk counts: the cache while it keeps it, a Held
// (Cache.GetHeld, IndexReader.Slice; the mount releases it once the
// kernel has the reply), an IndexReader's recent chunks and each read
// while it copies. The last release puts the buffer on a free list
// bounded by count (16 of a class) and bytes (an eighth of the cache,
// counted within it, but at least 6 buffers of 4 MiB, which a small
// cache gets on top); a count that reached zero is never raised again. Get and
// GetKey hand data out without a reference: it is never recycled. An
// IndexReader that LimitScans (the mount's images) caches the chunks of
// its sequential reads only within an eighth of the cache and four
// chunks (scanShare, maxScanBytes):
// a copy of an image neither flushes the chunks random readers come
// back to nor fills the cache with new memory; it streams through its
// read-ahead and recent chunks, which are recycled as it moves on.
//
// A snapshot copied from another store (jobs/storesync) is written as a
// Backup too; sync.go has what such a copy adds: the source's index and
// blob files byte for byte, checked against its manifest, and that
// manifest kept (SetManifestBase); chunk reuse (ReuseChunkContext) is the
// Uploader's.
//
// # Encrypted snapshots
//
// A snapshot may be encrypted as PBS encrypts on the client (keys.go has
// the on-disk rules). Backup.Encrypt makes a backup's Uploaders
// (Backup.NewUploader, Store.NewKeyUploader; uploadkey.go) name chunks
// by the keyed digest and store them encrypted, an all-zero chunk
// included (no plain zero-chunk shortcut); its blobs are encrypted, every
// file is listed "encrypt", and Finish signs the manifest and names the
// key's fingerprint in it (remote Finish too: the same manifest). An
// archive's reference (its dedup base, backup_ref.go) is a snapshot
// plain like the backup or with the same key; others are passed over.
// Store.SetKeys gives a command's keys;
// SnapshotKey finds a snapshot's by the fingerprint its manifest names
// and checks the signature over the manifest's stored bytes (once per
// decoded manifest). OpenSnapshotIndex binds an encrypted snapshot's
// index to its key (IndexKey), so IndexReaders decrypt through
// Cache.GetKey, whose entries are kept apart by key fingerprint: data
// checked under one key is never served to a plain reader or to another
// key's. What reads no chunk data needs no key: OpenIndexFile,
// OpenCheckedIndex, ReadBlobFile (a copy between stores takes an
// encrypted snapshot as it is, its signed manifest kept), and ReadBlob
// of a plain-magic blob (the master-key blob).
//
// # Remote stores: snapshot metadata in the bucket
//
// A remote store (remote_store.go) keeps its snapshot files in the bucket under
// the keys a local store's paths have (ns/NAME/…/TYPE/ID/TIME/FILE) and
// mirrors them in its local directory, where everything that reads
// snapshots finds them as on a local store. Many hosts share one bucket;
// the bucket, not any host's directory, is the truth, and these rules
// keep it consistent (numbers as in the safety protocol; rules 2 and 4,
// chunk reuse and GC, are with the remote chunk backend and GC):
//
// Rule 5, publishing (remote_meta.go). A backup writes its files into
// the local directory; Backup.Finish uploads every file its manifest
// lists (a few at a time), then the manifest with If-None-Match, last,
// and only then writes the local manifest. Whatever fails first (an
// upload, the context, a lost lease) leaves no manifest in the bucket or
// the directory: the snapshot is unfinished everywhere, its uploads are
// deleted again. A manifest update (UpdateManifest: verify state, notes)
// reads the bucket's manifest, changes it and puts it back If-Match its
// ETag, retrying when another host got ahead: no update is lost, and a
// manifest a forget deleted is never brought back. The protection marker
// is an object too (put, then the manifest checked still there; deleted
// before the local marker). CommitManifest publishes a snapshot written
// outside a Backup (tape restore) the same way.
//
// Rule 5, the mirror (remote_meta_refresh.go). Open, and Refresh (which a
// mount runs periodically), list the bucket's top-level prefixes, pass
// over .chunks/ and .cairn/, and list the others whole, streaming: key
// order keeps a snapshot's keys, and a group's, together, so a refresh
// holds one snapshot's objects and one group's snapshot times at a time.
// A file is downloaded when new or changed (size and LastModified, which
// the local copy keeps as its mtime), to a temporary name and renamed,
// the manifest last; unfinished snapshots are mirrored too (GC marks
// their indexes). Keys are hostile input (remote_meta_files.go): only a
// key that is exactly a snapshot file's path with valid names (an index
// or blob named as PBS names archives, the manifest, the marker) is
// mirrored, only up to the size its kind may have; the others are
// refused, each named in a *RefreshError, while the rest is mirrored.
// Directories are opened one component at a time without following
// symlinks, so nothing is written outside the store's directory. A local
// finished snapshot whose manifest left the bucket (forgotten by another
// host) is removed, after a HEAD confirms it, unless it is locked here (a
// backup writing it, a reader); so is an unfinished one the refresh made
// (it holds a hidden marker) once the bucket has nothing of it. Other
// local unfinished ones are left (a backup starting, or one that died
// here). A group the bucket has nothing of loses its local directory
// once it is empty and not new.
//
// Rule 1, leases (remote_leases.go). A lease is an object renewed by its
// holder every TTL/5 (5 minutes by default) with If-Match, taken over
// only once expired by the server's clock (If-Match on the expired ETag);
// a holder whose renewals fail for TTL/2 loses it and stops, and its
// lease expires for everyone else by the time it could act on it again.
// RegisterWriter takes a writer lease (.cairn/leases/writers/<random>)
// for the writer's whole life; its server creation time is the writer's
// Start. The writer then adds the lease's key to the writer registry
// (.cairn/writers.json, remote_registry.go) with a conditional write,
// before it looks at any chunk; a GC or a forget reads the registry and
// proves the read current by writing it back under If-Match, and reads
// each named lease by its key, so that a listing that lags cannot hide a
// running writer. LockGroup takes the group's lease
// (.cairn/leases/groups/<group>) beside the local flock, so one backup
// of a group runs at a time across hosts; a second waits the store's lock
// wait, then fails with a LockedError naming the holder's host, command,
// PID and start. A backup whose lease is lost fails in Finish, before its
// manifest; the uploads of its Finish stop as soon as the loss is seen. A dead
// host's leases expire after their TTL.
//
// Rule 3, forget (remote_forget.go). A backup names its base snapshots
// (each archive's reference, backup_ref.go: the group's newest usable
// snapshot that has the archive, whose chunks it takes as present
// without asking the bucket) in its writer lease's data, every one it
// holds at once (the list only grows while it builds on them), and after
// naming a new one HEADs its manifest, dropping it if it is gone. A
// lease names all of them, not one: two archives may build on two
// snapshots, and a base the lease does not name is one a forget could
// delete under the writer. A forget deletes the
// manifest object first, then lists the live writer leases: when one
// names the snapshot among its bases, the manifest is put back and the forget refused
// (ErrSnapshotInUse, naming the writer); otherwise the snapshot's other
// objects are deleted, then the local directory. Either the forget's
// listing comes after the writer's lease update, and sees it, or the
// writer's HEAD comes after the manifest's deletion, and sees it gone:
// no writer builds on a snapshot whose indexes are being deleted. A
// protected snapshot (the bucket's marker, checked before and after the
// manifest's deletion) is refused.
//
// # Remote stores: chunks
//
// A remote store's Backend is remoteChunks (remote_chunks.go): a chunk is
// the object .chunks/XXXX/<digest>. A read goes through the in-memory
// Cache, then a bounded on-disk cache of blobs in the store's directory
// (remote_cache.go: .chunk-cache/XXXX/<digest>, RemoteConfig.CacheSize,
// least recently used files trimmed by atime once the bytes added pass
// the bound; a copy whose CRC fails is dropped), then a GET bounded by
// the largest blob; verify's reads (DirectAlways) go to the bucket and
// leave the cache alone. An object too large for a blob is
// ErrCorruptChunk, a missing one ErrMissingChunk. Latency, not bandwidth,
// is what a bucket costs, so the store says how much to keep in flight:
// Readahead (chunks a sequential reader prefetches; zero chunks, which
// need no load, are skipped and not counted: readahead.go) and the
// Uploader's request goroutines beside its hash/compress workers.
//
// Rule 2, reusing a chunk (remote_chunks_reuse.go, ReuseChunkContext). A
// writer stores a chunk it holds unless the bucket has it. A chunk of its
// base snapshots' indexes costs no request: rule 3 keeps a base while
// the writer's lease names it, and a GC marks every index in the bucket.
// Any other is looked for with a HEAD, a hint only: found, it is touched
// (copied onto itself: LastModified becomes now), and the copy's answer
// must show a time not older than the request (else the chunk is stored
// again); missing, it is stored with a conditional PUT (If-None-Match:
// *), which the server decides against what it holds: created, it is new;
// refused, it is there and is touched as above. Every PUT carries its
// Content-MD5, and the answer's ETag must be that MD5. After a touch, or
// a write over an object that may be old, the writer reads the sweep
// record (remote_gc_record.go): a sweep running now may have listed the
// chunk with its old time and may delete it still, so the writer waits
// for it to end; one that ended after the request may have done so: the
// writer stores the chunk again from the data it still holds (a worker
// waits; memory stays bounded). A GC that starts after the touch has a
// cutoff at most the writer's Start, older than the touch. LastModified
// and the lease times are the server's clock, at a second's resolution,
// compared only with each other.
//
// What the rules assume of the endpoint: a conditional write is decided
// against the object's current state, and a Get reads a key's latest
// write. They do not assume that a listing shows every object (writers
// are found through the registry, the GC lease and the sweep record are
// read by key), that a HEAD is current, or that a PUT's or a copy's
// success means it was done (the answers are checked; objstore's
// answers.go). A GC's delete request is never retried: its first attempt
// may have landed, and a writer may have created the chunk again since.
// What no client can catch: a copy answered with a new time that was not
// made, and a listing of snapshots that lags more than the GC's cutoff
// (a snapshot finished just before a GC whose listing misses it is kept
// by its writer's Start only while the cutoff is older than that).
//
// # Garbage collection's side
//
// jobs/gc runs a collection; what depends on where the chunks live is a
// ChunkCollector (collector.go; a remote Backend's own: collecting): the cutoff's clocks (Begin), the mark of
// a referenced chunk, the sweep. The local one (gc_local.go,
// gc_local_sweep.go, with sweep*.go's primitives) touches atimes and
// sweeps the prefix directories, closing the race with writers of other
// processes by renaming a candidate aside before its last check. The
// remote one (remote_gc.go, rule 4) holds the bucket's GC lease, marks
// into a sorted set on the local disk (remote_gc_sort.go: external sort,
// memory bounded), reads the index objects the mirror lacks
// (remote_gc_indexes.go), tells writers it sweeps through the lease's
// data, and merge-joins the bucket's chunk listing with the set,
// deleting by LastModified (remote_gc_sweep.go); remote_gc.go has the
// whole argument why a chunk in use is never deleted. What verify and
// tape ask of a chunk beyond a read: StatChunk and MarkBad work on both
// (local_chunkinfo.go, remote_chunkinfo.go); ChunkDiskDir, ChunkSizeHint
// and PrefetchChunk find nothing to do on a bucket.
//
// Store knows nothing of FUSE or jobs.
package store
