package filearchive

import (
	"cmp"
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// The benchmarks back up CAIRN_BENCH_TREE (default /work/bench/gocopy, a
// copy of /usr/local/go: ≈15k files, 232 MB). The incremental one
// touches files of that tree, so it must be a copy.
func benchTree(b *testing.B) string {
	root := cmp.Or(os.Getenv("CAIRN_BENCH_TREE"), "/work/bench/gocopy")
	if _, err := os.Stat(root); err != nil {
		b.Skipf("no tree at %s (cp -a /usr/local/go %s)", root, root)
	}
	return root
}

func benchStore(b *testing.B) *store.Store {
	dir, err := os.MkdirTemp(filepath.Dir(benchTree(b)), "bench-store-")
	must(b, err)
	b.Cleanup(func() { os.RemoveAll(dir) })
	s, err := store.CreateWith(filepath.Join(dir, "s"), store.CreateOptions{LazyPrefixDirs: true})
	must(b, err)
	return s
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchBackup(b *testing.B, s *store.Store, root string, opt Options) Result {
	ctx := context.Background()
	bk, err := s.StartBackup(ctx, testGroup, nextTime())
	must(b, err)
	bk.Sync = store.SyncNone // measured: the backup, not the disk's flush
	res, err := AddArchive(ctx, bk, "root.pxar", root, opt)
	if err != nil {
		bk.Abort()
		b.Fatal(err)
	}
	must(b, bk.Finish())
	return res
}

// BenchmarkFirstBackup: a full backup into an empty store. MB/s is file
// content per second; meta% the metadata stream's size relative to the
// payload stream's (target ≤ 2%); stat% the stat table's.
func BenchmarkFirstBackup(b *testing.B) {
	root := benchTree(b)
	var res Result
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		s := benchStore(b)
		b.StartTimer()
		c := cpuTime()
		res = benchBackup(b, s, root, Options{})
		cpu += cpuTime() - c
	}
	b.SetBytes(int64(res.Walk.Bytes))
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(res.Walk.Files), "files")
	b.ReportMetric(100*float64(res.MetaSize)/float64(res.PayloadSize), "meta%")
	b.ReportMetric(100*float64(res.StatSize)/float64(res.PayloadSize), "stat%")
}

// BenchmarkIncremental: a metadata-mode backup after touching 1% of the
// files (a different 1% each time). Compare its time with
// BenchmarkFirstBackup's (target ≥ 10× faster).
func BenchmarkIncremental(b *testing.B) {
	root := benchTree(b)
	s := benchStore(b)
	benchBackup(b, s, root, Options{})
	var files []string
	must(b, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	}))
	rng := rand.New(rand.NewPCG(1, 2))
	var res Result
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		now := time.Now()
		for range len(files) / 100 {
			must(b, os.Chtimes(files[rng.IntN(len(files))], now, now))
		}
		// Backups are further apart than the ctime margin: files touched
		// now are read once, not again by the next iteration.
		time.Sleep(2 * time.Second)
		b.StartTimer()
		c := cpuTime()
		res = benchBackup(b, s, root, Options{})
		cpu += cpuTime() - c
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(res.ReadFiles), "read-files")
	b.ReportMetric(float64(res.ReusedFiles), "reused-files")
	b.ReportMetric(float64(res.PaddingBytes), "padding-B")
	b.ReportMetric(float64(res.InjectedBytes), "injected-B")
}

// BenchmarkLookupDeep looks up the deepest file of the tree's first
// backup: chunk loads with a cold cache, then time with a warm one.
func BenchmarkLookupDeep(b *testing.B) {
	root := benchTree(b)
	deep := ""
	must(b, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if rel, _ := filepath.Rel(root, p); err == nil && d.Type().IsRegular() && strings.Count(rel, "/") > strings.Count(deep, "/") {
			deep = rel
		}
		return err
	}))
	s := benchStore(b)
	benchBackup(b, s, root, Options{})
	ctx := context.Background()
	snap, err := s.Latest(testGroup)
	must(b, err)
	m, err := s.ReadManifest(snap)
	must(b, err)
	c, err := store.NewCache(s, 256<<20)
	must(b, err)
	defer c.Close()
	a, closeArchive, err := OpenName(ctx, s, snap, m, "root.pxar", c)
	must(b, err)
	defer closeArchive()
	before := c.Stats.Misses.Load()
	_, err = a.LookupPath(ctx, deep)
	must(b, err)
	loads := c.Stats.Misses.Load() // opening included
	for b.Loop() {
		if _, err := a.LookupPath(ctx, deep); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(strings.Count(deep, "/")), "dirs")
	b.ReportMetric(float64(loads), "loads-with-open")
	b.ReportMetric(float64(loads-before), "loads-lookup")
}
