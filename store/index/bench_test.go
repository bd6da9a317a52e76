package index

import (
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

// BenchmarkIndexLookup measures what a read through the mount asks of an
// index per request: Find and Chunk (each reads the mapping under fault
// protection).
func BenchmarkIndexLookup(b *testing.B) {
	dir := b.TempDir()
	const n = 1 << 14
	fw, err := NewFixedWriter(filepath.Join(dir, "x.fidx"), 1<<16)
	if err != nil {
		b.Fatal(err)
	}
	dw, err := NewDynamicWriter(filepath.Join(dir, "x.didx"))
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		d := chunk.Sum([]byte{byte(i), byte(i >> 8)})
		fw.Add(d, 1<<16)
		dw.Add(d, 1<<16+i%4096)
	}
	fw.Close()
	dw.Close()
	for _, name := range []string{"x.fidx", "x.didx"} {
		b.Run(name, func(b *testing.B) {
			x, err := Open(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			step := x.Size() / 1000
			var sink int64
			hint := 0
			for i := 0; b.Loop(); i++ {
				off := int64(i%1000) * step
				hint = x.Find(off, hint)
				d, start, end := x.Chunk(hint)
				sink += end - start + int64(d[0])
			}
			_ = sink
		})
	}
}
