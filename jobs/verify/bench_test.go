package verify

import (
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

const benchChunk = 4 << 20

// BenchmarkDecodeChunk is the blob decode + digest limit that verify and
// restore are measured against: 4 MiB incompressible blobs, one goroutine
// per CPU. serial and parallel decode one blob, which stays in the CPU's
// cache; parallel-64MiB cycles through 16 blobs, so that, as in a real
// verify or restore, each blob comes from memory.
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
	b.Run("parallel-64MiB", func(b *testing.B) {
		var blobs [16][]byte
		var sums [16]chunk.Digest
		for i := range blobs {
			data := randBytes("decode bench "+strconv.Itoa(i), benchChunk)
			blobs[i], _ = chunk.EncodeBlob(nil, data, true)
			sums[i] = chunk.Sum(data)
		}
		var next atomic.Int64
		b.SetBytes(benchChunk)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				i := next.Add(1) % int64(len(blobs))
				if _, err := chunk.DecodeChunk(nil, blobs[i], sums[i], benchChunk); err != nil {
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
				if st.State != jobs.StateOK || rep.Bytes != size {
					b.Fatalf("%s: %+v", st.State, rep)
				}
			}
		})
	}
}
