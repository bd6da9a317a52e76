package jobs

import (
	"strconv"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

const benchChunk = 4 << 20

// BenchmarkDecodeChunk is the blob decode + digest limit that verify is
// measured against: 4 MiB incompressible blobs, one goroutine per CPU.
func BenchmarkDecodeChunk(b *testing.B) {
	data := randBytes("decode bench", benchChunk)
	blob, err := chunk.EncodeBlob(nil, data, true)
	if err != nil {
		b.Fatal(err)
	}
	d := chunk.Sum(data)
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(benchChunk)
		var dst []byte
		for b.Loop() {
			if dst, err = chunk.DecodeChunk(dst, blob, d, benchChunk); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(benchChunk)
		b.RunParallel(func(pb *testing.PB) {
			var dst []byte
			for pb.Next() {
				var err error
				if dst, err = chunk.DecodeChunk(dst, blob, d, benchChunk); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

var benchOnce sync.Once

// BenchmarkVerify verifies 64 MiB of incompressible data in 4 MiB chunks
// (page-cache or tmpfs speed: the CPU-bound part of verify).
func BenchmarkVerify(b *testing.B) {
	s := testStore(b)
	const size = 64 << 20
	benchOnce.Do(func() {
		data := randBytes("verify bench", size)
		backupImageSize(b, s, store.Group{NS: "bench", Type: store.TypeVM, ID: "1"}, data, benchChunk)
	})
	for _, threads := range []int{1, 2, 4} {
		b.Run("verify-threads="+strconv.Itoa(threads), func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				st, rep, _ := runVerify(b, s, map[string]string{"ns": "bench", "chunk-order": "index",
					"verify-threads": strconv.Itoa(threads)})
				if st.State != StateOK || rep.Bytes != size {
					b.Fatalf("%s: %+v", st.State, rep)
				}
			}
		})
	}
}
