package digestsort

import (
	"bytes"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

// The marked set yields every digest added, once, in ascending order,
// whether it stayed in memory, spilled to runs, or merged runs into one
// (a small run and fan-in force both), with many goroutines adding.
func TestDigestSorter(t *testing.T) {
	for _, tc := range []struct {
		name        string
		runN, fanIn int
		n, distinct int
	}{
		{"empty", 16, 4, 0, 1},
		{"in one run", 1024, 4, 500, 300},
		{"many runs", 64, 100, 5000, 2000},
		{"merged runs", 16, 3, 5000, 700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := New(dir)
			s.runN, s.fanIn = tc.runN, tc.fanIn
			want := map[chunk.Digest]bool{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Go(func() {
					for i := w; i < tc.n; i += 4 {
						d := chunk.Sum([]byte{byte(i % tc.distinct), byte(i % tc.distinct >> 8)})
						mu.Lock()
						want[d] = true
						mu.Unlock()
						if err := s.Add(d); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			m, err := s.Finish()
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			var got []chunk.Digest
			for {
				d, ok, err := m.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, d)
			}
			if !slices.IsSortedFunc(got, func(a, b chunk.Digest) int { return bytes.Compare(a[:], b[:]) }) {
				t.Error("not sorted")
			}
			if len(got) != len(want) || len(slices.Compact(slices.Clone(got))) != len(got) {
				t.Fatalf("got %d digests, want %d distinct", len(got), len(want))
			}
			for _, d := range got {
				if !want[d] {
					t.Fatalf("digest %s was never added", d)
				}
			}
			if files, _ := os.ReadDir(dir); len(files) > tc.fanIn {
				t.Errorf("%d run files, want at most %d", len(files), tc.fanIn)
			}
		})
	}
}

// A run file cut short (the disk lost its end) is an error, not a
// shorter set: the sweep would take what is missing for garbage.
func TestDigestSorterTruncatedRun(t *testing.T) {
	dir := t.TempDir()
	s := New(dir)
	s.runN = 8
	for i := range 20 {
		s.Add(chunk.Sum([]byte{byte(i)}))
	}
	m, err := s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if err := os.Truncate(s.runs[0], 8*32-5); err != nil {
		t.Fatal(err)
	}
	m, err = openMerge(s.runs)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for {
		_, ok, err := m.Next()
		if err != nil {
			return
		}
		if !ok {
			t.Fatal("a truncated run read as a shorter set")
		}
	}
}

// BenchmarkSorter adds 1M random digests (four runs spilled to
// disk), then merges them: the remote GC's mark set, per digest.
func BenchmarkSorter(b *testing.B) {
	const n = 1 << 20
	ds := make([]chunk.Digest, n)
	for i := range ds {
		ds[i] = chunk.Sum([]byte{byte(i), byte(i >> 8), byte(i >> 16)})
	}
	b.ResetTimer()
	for range b.N {
		s := New(b.TempDir())
		for _, d := range ds {
			if err := s.Add(d); err != nil {
				b.Fatal(err)
			}
		}
		m, err := s.Finish()
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for {
			_, ok, err := m.Next()
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			got++
		}
		m.Close()
		if got != n {
			b.Fatalf("%d digests out of %d", got, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/digest")
}
