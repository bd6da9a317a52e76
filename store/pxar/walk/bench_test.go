package walk

import (
	"cmp"
	"context"
	"os"
	"testing"
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
