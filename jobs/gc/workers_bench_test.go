package gc

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sync/errgroup"
)

// BenchmarkGCWorkers sizes the worker pools: it runs whole GCs on a
// store of benchChunks chunks with the default pools and, with
// CAIRN_GC_BENCH_WORKERS set, with 1, 2, 4 and 16 workers a phase.
// (BenchmarkGCBigStore and test/bench/gc.sh measure the targets.)

// benchChunks is the store size of BenchmarkGCWorkers
// (CAIRN_GC_BENCH_CHUNKS overrides it).
func benchChunks() int {
	if n, err := strconv.Atoi(os.Getenv("CAIRN_GC_BENCH_CHUNKS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

var (
	benchOnce  sync.Once
	benchStore *store.Store
	benchErr   error
)

// benchFixture is a store of n chunk files (written directly: GC does
// not read them) and four snapshots whose dynamic indexes reference
// them, each sharing 90% with the one before, made once. With
// CAIRN_GC_BENCH_DIR it is made there and kept (and reused when there),
// to measure `cairn gc` on it.
func benchFixture(b *testing.B, n int) *store.Store {
	benchOnce.Do(func() {
		dir := os.Getenv("CAIRN_GC_BENCH_DIR")
		if dir != "" {
			if benchStore, benchErr = store.Open(filepath.Join(dir, "store")); benchErr == nil {
				return
			}
		} else {
			var err error
			if dir, err = os.MkdirTemp("", "cairn-gc-bench"); err != nil {
				benchErr = err
				return
			}
			b.Cleanup(func() { os.RemoveAll(dir) })
		}
		benchStore, benchErr = store.Create(filepath.Join(dir, "store"))
		if benchErr != nil {
			return
		}
		g := store.Group{Type: store.TypeVM, ID: "bench"}
		for k := range 4 {
			if benchErr = benchSnapshot(benchStore, g, k, n); benchErr != nil {
				return
			}
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore
}

func benchSnapshot(s *store.Store, g store.Group, k, n int) error {
	at := time.Date(2025, 1, 1, k, 0, 0, 0, time.UTC)
	bk, err := s.StartBackup(context.Background(), g, at)
	if err != nil {
		return err
	}
	bk.Sync = store.SyncNone
	w, err := index.NewDynamicWriter(filepath.Join(bk.Dir(), "data.didx"))
	if err != nil {
		return err
	}
	per := n * 10 / 13 // four snapshots of 90% shared make n chunks
	first := k * per / 10
	var digs []chunk.Digest
	for i := first; i < first+per; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i))
		d := chunk.Sum(b[:])
		digs = append(digs, d)
		if err := w.Add(d, 4096); err != nil {
			return err
		}
	}
	var g2 errgroup.Group
	g2.SetLimit(8)
	for _, d := range digs {
		g2.Go(func() error {
			p := s.ChunkPath(d)
			if _, err := os.Lstat(p); err == nil {
				return nil
			}
			return os.WriteFile(p, []byte("blob"), 0o600)
		})
	}
	if err := g2.Wait(); err != nil {
		return err
	}
	csum, size, err := w.Close()
	if err != nil {
		return err
	}
	if err := bk.AddFile(store.FileInfo{Filename: "data.didx", Size: uint64(size), Csum: store.CsumHex(csum)}); err != nil {
		return err
	}
	return bk.Finish()
}

// BenchmarkGCWorkers runs a whole GC (nothing to remove) and reports
// each phase's rate: chunk references marked per second and chunk files
// swept per second.
func BenchmarkGCWorkers(b *testing.B) {
	s := benchFixture(b, benchChunks())
	b.Run("default", func(b *testing.B) { benchGC(b, s, Options{}) })
	if os.Getenv("CAIRN_GC_BENCH_WORKERS") == "" {
		return
	}
	for _, w := range []int{1, 2, 4, 16} {
		b.Run("workers="+strconv.Itoa(w), func(b *testing.B) { benchGC(b, s, Options{MarkWorkers: w, SweepWorkers: w}) })
	}
}

func benchGC(b *testing.B, s *store.Store, opt Options) {
	opt.AtimeCutoff = DefaultAtimeCutoff
	var p1, p2 float64
	var rep Report
	for b.Loop() {
		var err error
		rep, err = Run(context.Background(), s, opt)
		if err != nil {
			b.Fatal(err)
		}
		p1 += rep.Phase1Seconds
		p2 += rep.Phase2Seconds
	}
	b.ReportMetric(float64(rep.ChunkRefs)*float64(b.N)/p1, "refs/s")
	b.ReportMetric(float64(rep.ChunkFiles)*float64(b.N)/p2, "files/s")
	b.ReportMetric(float64(rep.ChunksTouched), "touched")
	b.ReportMetric(float64(rep.ChunkFiles), "files")
}
