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
// Chunks are read through Backend (backend.go), the seam between where
// chunks live and what is done with them; the local directory
// (local_read.go, local_chunks.go) is its first implementation and keeps its fast paths
// behind ChunkOptions: page-cached chunk files mapped (their faults
// turned into ErrChunkFault by Blob.Do), others read with O_DIRECT into
// reused aligned buffers.
//
// It also owns reading: a byte-bounded shared cache of decoded,
// digest-checked chunks (Cache) and io.ReaderAt views of an index through
// that cache (IndexReader), the seam between the store and everything
// that reads archives.
//
// A snapshot copied from another store (jobs/storesync) is written as a
// Backup too; sync.go has what such a copy adds: the source's index and
// blob files byte for byte, checked against its manifest, and that
// manifest kept (SetManifestBase); chunk reuse (ReuseChunk) is the
// Uploader's.
//
// Store knows nothing of FUSE or jobs.
package store
