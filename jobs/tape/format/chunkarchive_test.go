package format

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/block"
)

type testChunk struct {
	digest chunk.Digest
	blob   []byte
}

// makeChunks returns n chunks of pseudo-random (incompressible) data.
func makeChunks(t *testing.T, n, size int) []testChunk {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	out := make([]testChunk, n)
	for i := range out {
		data := make([]byte, size+i)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		blob, err := chunk.EncodeBlob(nil, data, true)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = testChunk{chunk.Sum(data), blob}
	}
	return out
}

func readChunks(t *testing.T, m *memTape) ([]chunk.Digest, error) {
	t.Helper()
	a, err := NewChunkArchiveReader(m.reader(t))
	if err != nil {
		t.Fatal(err)
	}
	if a.Store != "store1" {
		t.Fatalf("store %q", a.Store)
	}
	var got []chunk.Digest
	for {
		d, blob, err := a.Next(nil)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		if _, err := chunk.DecodeChunk(nil, blob, d, -1); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		got = append(got, d)
	}
}

func TestChunkArchiveRoundTrip(t *testing.T) {
	chunks := makeChunks(t, 6, 100<<10)
	m, w := newTape(0)
	a, err := NewChunkArchiveWriter(w, "store1", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range chunks {
		if ok, err := a.WriteChunk(c.digest, c.blob); !ok || err != nil {
			t.Fatalf("WriteChunk = %v, %v", ok, err)
		}
	}
	if err := a.Finish(); err != nil {
		t.Fatal(err)
	}
	got, err := readChunks(t, m)
	if err != nil || len(got) != len(chunks) {
		t.Fatalf("read %d chunks, %v", len(got), err)
	}
	for i := range got {
		if got[i] != chunks[i].digest || a.Digests()[i] != got[i] {
			t.Fatalf("chunk %d differs", i)
		}
	}
}

// At LEOM the writer stops; exactly the chunks it reports are readable,
// and the cut-off last entry is ignored.
func TestChunkArchiveLEOM(t *testing.T) {
	chunks := makeChunks(t, 12, 100<<10)
	for _, leomAt := range []int{1, 2, 3, 4} {
		t.Run(fmt.Sprint("leom at block ", leomAt), func(t *testing.T) {
			m, w := newTape(leomAt)
			a, err := NewChunkArchiveWriter(w, "store1", 0)
			if err != nil {
				t.Fatal(err)
			}
			written := 0
			for _, c := range chunks {
				ok, err := a.WriteChunk(c.digest, c.blob)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				written++
			}
			if !a.LEOM() || !a.Closed() || written == len(chunks) {
				t.Fatalf("LEOM=%v closed=%v written=%d", a.LEOM(), a.Closed(), written)
			}
			if err := a.Finish(); err != nil {
				t.Fatal(err)
			}
			got, err := readChunks(t, m)
			if err != nil || len(got) != written || len(a.Digests()) != written {
				t.Fatalf("read %d chunks, writer says %d (%d), %v", len(got), written, len(a.Digests()), err)
			}
			if m.blocks > leomAt+1 {
				t.Fatalf("%d blocks written, LEOM at %d", m.blocks, leomAt)
			}
		})
	}
}

func TestChunkArchiveSizeLimit(t *testing.T) {
	chunks := makeChunks(t, 8, 200<<10)
	_, w := newTape(0)
	a, err := NewChunkArchiveWriter(w, "store1", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range chunks {
		ok, err := a.WriteChunk(c.digest, c.blob)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		n++
	}
	if a.LEOM() || !a.Closed() || n == 0 || n == len(chunks) {
		t.Fatalf("size limit: leom=%v closed=%v n=%d", a.LEOM(), a.Closed(), n)
	}
	if a.BytesWritten() > 1<<20 {
		t.Fatalf("archive of %d bytes exceeds the 1 MiB limit", a.BytesWritten())
	}
}

func TestChunkArchiveCorrupt(t *testing.T) {
	chunks := makeChunks(t, 3, 1000)
	m, w := newTape(0)
	a, _ := NewChunkArchiveWriter(w, "store1", 0)
	for _, c := range chunks {
		a.WriteChunk(c.digest, c.blob)
	}
	a.Finish()
	good := m.buf.Bytes()
	hdrLen := bytes.Index(good, MagicChunkEntry[:]) // first entry
	entry2 := hdrLen + ChunkEntryHeaderSize + len(chunks[0].blob)
	tests := []struct {
		name string
		off  int
		want error
	}{
		{"entry magic", entry2 + 2, ErrCorrupt},
		{"blob byte", entry2 + ChunkEntryHeaderSize + 20, chunk.ErrBadCRC},
		{"blob size", entry2 + 47, ErrCorrupt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := &memTape{}
			bad.buf.Write(good)
			bad.buf.Bytes()[tc.off] ^= 0x40
			got, err := readChunks(t, bad)
			if !errors.Is(err, tc.want) || len(got) != 1 {
				t.Fatalf("read %d chunks, err %v; want %v after one chunk", len(got), err, tc.want)
			}
		})
	}
	// a stream without end block is truncated, not a short archive
	cut := &memTape{}
	cut.buf.Write(good[:block.Size/2])
	if _, err := block.NewReader(block.StreamSource(bytes.NewReader(cut.buf.Bytes())), "x"); !errors.Is(err, block.ErrTruncated) {
		t.Fatalf("cut stream: %v", err)
	}
}
