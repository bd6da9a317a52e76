package tape

import (
	"sync"
	"testing"
)

// plainSource offers only Source's methods: Export then allocates a
// buffer per chunk, keeps index order and knows no byte total.
type plainSource struct{ Source }

// totalsReporter records the totals Export announces.
type totalsReporter struct {
	countingReporter
	mu           sync.Mutex
	items, bytes int64
}

func (r *totalsReporter) SetTotals(items, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items, r.bytes = items, bytes
}

// Both ways of loading chunks (into recycled buffers, or one allocation
// per chunk) write the same chunks, which restore intact; a source that
// can size chunks gives progress a byte total.
func TestExportSources(t *testing.T) {
	f := newFixture(t)
	snaps := []string{f.a, f.b, f.c}
	for _, tc := range []struct {
		name      string
		src       Source
		wantBytes bool
	}{
		{"store source", f.src, true},
		{"plain source", plainSource{f.src}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := openDrive(t, t.TempDir())
			rep := &totalsReporter{}
			opts := exportOpts(3)
			opts.Reporter = rep
			r, err := Export(bg, d, tc.src, snaps, opts)
			if err != nil || r.Failed() != 0 {
				t.Fatalf("export: %+v %v", r, err)
			}
			if rep.items != r.Chunks || rep.countingReporter.items.Load() != r.Chunks || rep.countingReporter.bytes.Load() != r.Bytes {
				t.Fatalf("progress: totals %d items, done %d items %d bytes; report %d chunks %d bytes",
					rep.items, rep.countingReporter.items.Load(), rep.countingReporter.bytes.Load(), r.Chunks, r.Bytes)
			}
			if tc.wantBytes != (rep.bytes == r.Bytes) || (!tc.wantBytes && rep.bytes != 0) {
				t.Fatalf("byte total %d, report %d bytes", rep.bytes, r.Bytes)
			}
			target := newStore(t)
			sink, err := NewStoreSink(bg, target)
			if err != nil {
				t.Fatal(err)
			}
			rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Workers: 3, Logger: quiet})
			sink.Close()
			if err != nil || rr.Failed() != 0 || rr.Chunks != r.Chunks {
				t.Fatalf("restore: %+v %v", rr, err)
			}
			for _, s := range snaps {
				sameSnapshot(t, f.s, target, s)
				checkChunks(t, f.src, target, s)
			}
		})
	}
}
