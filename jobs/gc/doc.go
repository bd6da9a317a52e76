// Package gc is the garbage collector of a store: the gc job kind (Kind,
// whose key=value parameters ParseParams reads into Options, and Run for
// callers outside the job manager). It removes the chunk files no
// snapshot references any more, as Proxmox Backup Server does, in two
// phases, and saves its Report in the store (.gc-status, ReadStatus).
//
// The package owns the orchestration; what depends on where the chunks
// live is the store's ChunkCollector (one per run: Begin reads the
// cutoff's clocks, MarkChunk marks a referenced chunk, the sweep removes
// the rest). Why nothing in use is ever removed — the cutoff, the five
// cases of a chunk a snapshot needs, a kill at any point, a remote
// store's leases and sweep record — is argued in docs/design/gc.md.
//
// The files:
//
//	gc.go      Options (the atime cutoff's bounds), Observer, Run
//	kind.go    Kind: the job kind, ParseParams
//	run.go     one run: worker counts, the phases in order, log and finish
//	cutoff.go  WriterMargin: the oldest writer's bound on the cutoff
//	mark.go    phase 1: every index of every snapshot, on a pool, marked
//	cache.go   the fixed-size cache of recently touched digests
//	sweep.go   phase 2 through the collector, missing chunks counted
//	report.go  Report and its summary
//	status.go  .gc-status: the last report, written by rename
//
// Memory is bounded: the cache holds DefaultCacheEntries digests (32
// MiB), index files are mapped and read in ranges, and the sweep holds
// one prefix directory's listing per worker.
package gc
