package gc_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sync/errgroup"
)

// BenchmarkGCBigStore runs GC (cutoff 0) on a store of
// CAIRN_BENCH_GC_CHUNKS small distinct chunks (default 1,000,000; 64
// bytes each, spread over the 65,536 prefix directories of a full store
// as `cairn init` makes it), every one referenced: 10 snapshots whose
// dynamic indexes reference 2n/10 chunks each, each overlapping the
// previous one by half (1.9 references per chunk, as incremental
// backups share). Before each run 1% more chunks are written as garbage
// an hour old, which the run removes.
//
// The store is made once under CAIRN_BENCH_GC_DIR (default
// /var/tmp/cairn-bench-gc) and kept for later runs. Reported: phase 1
// chunk references per second, phase 2 chunk files per second, and the
// process's peak RSS (which includes making the store when this run
// made it: test/bench/gc.sh measures the cairn binary alone).
//
//	CAIRN_BENCH_GC_CHUNKS=1000000 go test ./jobs/gc -run '^$' -bench BenchmarkGCBigStore -benchtime 3x
func BenchmarkGCBigStore(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("CAIRN_BENCH_GC_CHUNKS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			b.Fatalf("CAIRN_BENCH_GC_CHUNKS=%q: want a number of at least 1000", v)
		}
	}
	s := bigStore(b, n)
	ctx := context.Background()
	var refs, files, removed int64
	var p1, p2 float64
	iter := 0
	for b.Loop() {
		b.StopTimer()
		garbage(b, s, n/100, iter)
		iter++
		b.StartTimer()
		rep, err := gc.Run(ctx, s, gc.Options{AtimeCutoff: 0})
		if err != nil {
			b.Fatal(err)
		}
		if rep.MissingChunks != 0 || rep.DiskChunks < int64(n) {
			b.Fatalf("GC lost chunks of the store: %+v", rep)
		}
		refs, files, removed = refs+rep.ChunkRefs, files+rep.ChunkFiles, removed+rep.RemovedChunks
		p1, p2 = p1+rep.Phase1Seconds, p2+rep.Phase2Seconds
	}
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(refs)/p1, "refs/s")
	b.ReportMetric(float64(files)/p2, "files/s")
	b.ReportMetric(float64(removed)/float64(b.N), "removed/op")
	b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MiB")
}

const (
	bigSnapshots = 10
	bigChunkSize = 64
)

// bigChunk is chunk number i of a big store: distinct small data and
// its blob (stored uncompressed, as zstd would not shrink it).
func bigChunk(i uint64, salt string) (chunk.Digest, []byte, error) {
	var data [bigChunkSize]byte
	binary.LittleEndian.PutUint64(data[:], i)
	copy(data[8:], salt)
	d := chunk.Sum(data[:])
	blob, err := chunk.EncodeBlob(nil, data[:], false)
	return d, blob, err
}

// bigStore opens the benchmark store of n chunks, making it first when
// it is not there complete.
func bigStore(b *testing.B, n int) *store.Store {
	dir := filepath.Join(cmp.Or(os.Getenv("CAIRN_BENCH_GC_DIR"), "/var/tmp/cairn-bench-gc"), strconv.Itoa(n))
	done := filepath.Join(dir, "complete")
	if _, err := os.Stat(done); err == nil {
		s, err := store.Open(filepath.Join(dir, "store"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	s, err := store.CreateWith(filepath.Join(dir, "store"), store.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if err := insertChunks(s, 0, n, ""); err != nil {
		b.Fatal(err)
	}
	for k := range bigSnapshots {
		if err := bigSnapshot(s, n, k); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Logf("made a store of %d chunks and %d snapshots in %s", n, bigSnapshots, time.Since(start).Round(time.Second))
	return s
}

// insertChunks inserts chunks lo to hi-1 on a few workers.
func insertChunks(s *store.Store, lo, hi int, salt string) error {
	var g errgroup.Group
	const workers = 4
	for w := range workers {
		g.Go(func() error {
			for i := lo + w; i < hi; i += workers {
				d, blob, err := bigChunk(uint64(i), salt)
				if err == nil {
					_, err = s.InsertChunk(d, blob)
				}
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// bigSnapshot writes snapshot k: a dynamic index of chunks
// [k·n/10 − n/10, (k+1)·n/10), clipped at 0.
func bigSnapshot(s *store.Store, n, k int) error {
	ctx := context.Background()
	g := store.Group{Type: store.TypeHost, ID: "big"}
	bk, err := s.StartBackup(ctx, g, time.Now().Add(-time.Duration(bigSnapshots-k)*time.Hour).Truncate(time.Second))
	if err != nil {
		return err
	}
	bk.Sync = store.SyncNone
	name := "data.pxar.didx"
	w, err := index.NewDynamicWriter(filepath.Join(bk.Dir(), name))
	if err != nil {
		bk.Abort()
		return err
	}
	per := n / bigSnapshots
	for i := max(k*per-per, 0); i < min((k+1)*per, n); i++ {
		d, _, _ := bigChunk(uint64(i), "")
		if err = w.Add(d, bigChunkSize); err != nil {
			break
		}
	}
	if err != nil {
		w.Abort()
		bk.Abort()
		return err
	}
	csum, size, err := w.Close()
	if err == nil {
		err = bk.AddFile(store.FileInfo{Filename: name, Size: uint64(size), Csum: store.CsumHex(csum)})
	}
	if err != nil {
		bk.Abort()
		return err
	}
	return bk.Finish()
}

// garbage writes m unreferenced chunks an hour old.
func garbage(b *testing.B, s *store.Store, m, iter int) {
	salt := fmt.Sprintf("garbage %d %d", iter, time.Now().UnixNano())
	if err := insertChunks(s, 0, m, salt); err != nil {
		b.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for i := range m {
		d, _, _ := bigChunk(uint64(i), salt)
		if err := os.Chtimes(s.ChunkPath(d), old, old); err != nil {
			b.Fatal(err)
		}
	}
}
