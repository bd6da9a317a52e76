// Package s3store is the remote kind of store: a store whose chunks and
// snapshot files live in an S3-compatible bucket (store/objstore), shared
// by many hosts, with the store's local directory as a mirror of the
// snapshot files and a bounded cache of chunks. It is the other side of
// both of package store's seams, and everything else sees a remote store
// as it sees a local one, a *store.Store.
//
// Its init registers how a store directory holding store.RemoteConfigName
// is opened (store.RegisterRemote): a program that opens stores imports
// this package (cmd/cairn/cli does), and store.Open does the rest. Create
// and CreateOn make a new one (create.go); OpenOn opens one on a bucket
// of the caller's (tests: an in-memory bucket, objstore/memstore);
// InfoOf describes one.
//
// A map of its files:
//
//   - remote.go: the configuration (Config, remote.json), the opener,
//     rstore (the *store.Store and what a remote store has beyond it),
//     the bucket's key layout.
//   - chunks.go, chunks_reuse.go, chunkinfo.go, cache.go: the
//     store.Backend (remoteChunks) with its optional Prober and
//     Collecting; how a writer reuses a chunk without uploading it (rule
//     2); the on-disk chunk cache. chunks_list.go: the listing of the
//     chunks (GC's sweep, WalkChunks), in key ranges listed in parallel.
//   - metastore.go: the store.MetaStore (remoteMeta), each method a line
//     into meta.go (publish, manifests), forget.go (rule 3), leases.go
//     (group and writer leases, rules 1 and 3), meta_refresh.go,
//     meta_list.go (its listing, in ranges of groups listed at once),
//     meta_files.go and meta_remove.go (the mirror: rule 5, the bucket's
//     keys taken as hostile input), offline.go (a bucket unreachable at
//     open).
//   - registry.go: the writer registry (rule 1).
//   - gc*.go: garbage collection (rule 4): the GC lease and its phases
//     (gc.go), the indexes the mirror lacks (gc_indexes.go), snapshots
//     published lately (gc_recent.go), the sweep record (gc_record.go),
//     the merge-join of the marked set (store/digestsort) with the
//     bucket's listing (gc_sweep.go).
//
// The rules 1-5 named in these files are the safety protocol that keeps
// many hosts on one bucket consistent, argued in docs/design/store.md.
package s3store
