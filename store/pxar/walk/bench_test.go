package walk

import (
	"cmp"
	"context"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkWalkGoRoot archives /usr/local/go (≈15k files; another tree
// with CAIRN_BENCH_TREE) into counting writers and reports the metadata
// stream's size relative to the payload stream (target: ≤ 2%).
func BenchmarkWalkGoRoot(b *testing.B) {
	root := cmp.Or(os.Getenv("CAIRN_BENCH_TREE"), "/usr/local/go")
	if _, err := os.Stat(root); err != nil {
		b.Skipf("no tree at %s", root)
	}
	var meta, payload countWriter
	for b.Loop() {
		meta, payload = countWriter{}, countWriter{}
		if _, err := Walk(context.Background(), root, &meta, &payload, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(payload.n)
	b.ReportMetric(100*float64(meta.n)/float64(payload.n), "meta%")
	b.ReportMetric(float64(meta.n), "meta-bytes")
}

// BenchmarkWalkReadAhead archives the tree of BenchmarkWalkGoRoot with
// and without the read-ahead helper, from a cold page cache when
// CAIRN_BENCH_COLD=1 (as root: caches are dropped before each walk).
func BenchmarkWalkReadAhead(b *testing.B) {
	root := cmp.Or(os.Getenv("CAIRN_BENCH_TREE"), "/usr/local/go")
	if _, err := os.Stat(root); err != nil {
		b.Skipf("no tree at %s", root)
	}
	cold := os.Getenv("CAIRN_BENCH_COLD") == "1"
	for _, off := range []bool{true, false} {
		name := map[bool]string{true: "off", false: "on"}[off]
		b.Run(name, func(b *testing.B) {
			var payload countWriter
			for b.Loop() {
				if cold {
					b.StopTimer()
					unix.Sync()
					if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0); err != nil {
						b.Skipf("cannot drop caches: %v", err)
					}
					b.StartTimer()
				}
				payload = countWriter{}
				_, err := Walk(context.Background(), root, &countWriter{}, &payload, Options{ReadAhead: ReadAhead{Off: off}})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(payload.n)
		})
	}
}
