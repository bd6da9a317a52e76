package hostile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// ChunkSize is the size of the chunks the index generator stores, and the
// chunk size of the fixed indexes it writes.
const ChunkSize = 64 << 10

// Chunk is a chunk stored for indexes to list: its digest and plain data.
type Chunk struct {
	Digest chunk.Digest
	Data   []byte
}

// PutChunk stores data as a real chunk (a zstd blob where data
// compresses) and returns it.
func PutChunk(s *store.Store, data []byte) (Chunk, error) {
	blob, err := chunk.EncodeBlob(nil, data, true)
	if err != nil {
		return Chunk{}, err
	}
	d := chunk.Sum(data)
	if _, err := s.InsertChunk(d, blob); err != nil {
		return Chunk{}, err
	}
	return Chunk{Digest: d, Data: data}, nil
}

// PutChunks stores n chunks of size bytes of compressible data made from
// seed, so that different seeds give different chunks.
func PutChunks(s *store.Store, seed string, n, size int) ([]Chunk, error) {
	out := make([]Chunk, n)
	for i := range out {
		c, err := PutChunk(s, Data(fmt.Sprintf("%s %d", seed, i), size))
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// Data returns size bytes made from seed: text with a counter, which zstd
// compresses, and no two seeds alike.
func Data(seed string, size int) []byte {
	b := make([]byte, 0, size+64)
	for i := 0; len(b) < size; i++ {
		b = fmt.Appendf(b, "%s line %d %x\n", seed, i, sha256.Sum256(fmt.Appendf(nil, "%s%d", seed, i%7)))
	}
	return b[:size]
}

// Stage is where cairn must notice a hostile index.
type Stage int

const (
	// AtOpen: opening the index (checked against the manifest) fails.
	AtOpen Stage = iota + 1
	// AtRead: the index opens; reading some of its data fails.
	AtRead
)

// IndexCase is one class of hostile index.
type IndexCase struct {
	Name  string // also the snapshot's backup ID
	Stage Stage
	// File is the index file's name in the snapshot: disk.img.fidx (the
	// archive disk.img) or data.didx (the archive data).
	File string
	// make returns the index file's bytes and the data size the manifest
	// records; the case's chunks are stored by then. No bytes (nil) make
	// the index file a FIFO, which an open for reading would wait on for
	// a writer forever.
	make func(s *store.Store, c []Chunk) (file []byte, size uint64, err error)
}

// RandomDynamic returns a dynamic index of 1 to 16 entries drawn from the
// chunks given (repeats likely), each given the chunk's own size or, by
// chance, another one. Its Stage is AtRead when some size is wrong and 0
// when the index is good.
func RandomDynamic(seed uint64) IndexCase {
	r := rand.New(rand.NewPCG(seed, seed>>32))
	n := 1 + r.IntN(16)
	picks := make([]int, n)
	skews := make([]int, n)
	stage := Stage(0)
	for i := range picks {
		picks[i] = r.IntN(4)
		if r.IntN(4) == 0 {
			skews[i] = r.IntN(2*ChunkSize) - ChunkSize + 1 // -S+1 .. S: never an empty entry
			if skews[i] != 0 {
				stage = AtRead
			}
		}
	}
	return IndexCase{Name: fmt.Sprintf("random-%d", seed), Stage: stage, File: DynamicFile,
		make: func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			var entries []sized
			for i, k := range picks {
				entries = append(entries, sized{c[k], uint64(len(c[k].Data) + skews[i])})
			}
			return didx(entries)
		}}
}

// Archive is the name the mount and cat know the case's archive by.
func (c IndexCase) Archive() string {
	if c.File == FixedFile {
		return "disk.img"
	}
	return "data"
}

// The index files of the cases (and of a good snapshot).
const (
	FixedFile   = "disk.img.fidx"
	DynamicFile = "data.didx"
)

// IndexCases returns every class of hostile index. Each lists chunks of
// the slice given to WriteIndexCase (at least four of ChunkSize bytes),
// and some store chunks of their own.
func IndexCases() []IndexCase {
	const S = ChunkSize
	return []IndexCase{
		{"dup-two-sizes", AtRead, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return didx(ends(c[0], S, c[1], S, c[0], S+4096))
		}},
		{"dup-two-sizes-shorter", AtRead, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return didx(ends(c[0], S, c[1], S, c[0], S-4096, c[2], S))
		}},
		{"didx-size-disagrees", AtRead, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return didx(ends(c[0], S, c[1], S+100, c[2], S))
		}},
		{"fidx-size-disagrees", AtRead, FixedFile, func(s *store.Store, c []Chunk) ([]byte, uint64, error) {
			half, err := PutChunk(s, Data("hostile half chunk", S/2))
			if err != nil {
				return nil, 0, err
			}
			return fidx(3*S, S, c[0].Digest, half.Digest, c[1].Digest)
		}},
		{"fidx-last-longer", AtRead, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return fidx(2*S+S/2, S, c[0].Digest, c[1].Digest, c[2].Digest)
		}},
		{"missing-chunk", AtRead, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return didx(ends(c[0], S, Chunk{Digest: chunk.Sum([]byte("never stored"))}, S, c[1], S))
		}},
		{"chunk-is-fifo", AtRead, DynamicFile, func(s *store.Store, c []Chunk) ([]byte, uint64, error) {
			// A FIFO where a chunk file should be: opening it for
			// reading would wait for a writer forever.
			d := chunk.Sum([]byte("a fifo"))
			path := s.ChunkPath(d)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, 0, err
			}
			if err := unix.Mkfifo(path, 0o644); err != nil && !errors.Is(err, os.ErrExist) {
				return nil, 0, err
			}
			return didx(ends(c[0], S, Chunk{Digest: d}, S, c[1], S))
		}},
		{"index-is-fifo", AtOpen, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return nil, S, nil
		}},
		{"didx-entries-past-end", AtOpen, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			b, size, err := didx(ends(c[0], S, c[1], S, c[2], S))
			return b, size - S, err // the manifest ends before the last entry
		}},
		{"fidx-entries-past-end", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return fidx(2*S, S, c[0].Digest, c[1].Digest, c[2].Digest, c[3].Digest)
		}},
		{"didx-not-increasing", AtOpen, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return didxRaw([]uint64{S, 3 * S, 2 * S}, c[0], c[1], c[2])
		}},
		{"didx-zero-length", AtOpen, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return didxRaw([]uint64{S, S, 2 * S}, c[0], c[1], c[2])
		}},
		{"didx-truncated", AtOpen, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			b, size, err := didx(ends(c[0], S, c[1], S, c[2], S))
			return b[:len(b)-17], size, err
		}},
		{"didx-truncated-entry-boundary", AtOpen, DynamicFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			b, size, err := didx(ends(c[0], S, c[1], S, c[2], S))
			return b[:len(b)-didxEntry], size, err
		}},
		{"fidx-truncated", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			b, size, err := fidx(3*S, S, c[0].Digest, c[1].Digest, c[2].Digest)
			return b[:len(b)-5], size, err
		}},
		{"truncated-header", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			b, size, err := fidx(S, S, c[0].Digest)
			return b[:100], size, err
		}},
		{"fidx-count-disagrees", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return fidx(5*S, S, c[0].Digest, c[1].Digest, c[2].Digest)
		}},
		{"fidx-chunk-size-zero", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return fidx(S, 0, c[0].Digest)
		}},
		{"fidx-chunk-size-odd", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return fidx(S, S+1, c[0].Digest)
		}},
		{"fidx-size-negative", AtOpen, FixedFile, func(_ *store.Store, c []Chunk) ([]byte, uint64, error) {
			return fidx(1<<63, S, c[0].Digest)
		}},
	}
}

// WriteIndexCase writes case ic as a finished snapshot of group g at t:
// its index file and a manifest that matches the index's header (so the
// index is what is hostile, not the manifest).
func WriteIndexCase(ctx context.Context, s *store.Store, g store.Group, t time.Time, ic IndexCase, c []Chunk) (store.Snapshot, error) {
	if len(c) < 4 {
		return store.Snapshot{}, fmt.Errorf("hostile index %s: %d chunks given, 4 needed", ic.Name, len(c))
	}
	file, size, err := ic.make(s, c)
	if err != nil {
		return store.Snapshot{}, fmt.Errorf("hostile index %s: %w", ic.Name, err)
	}
	var csum [32]byte
	if len(file) >= indexHeader {
		copy(csum[:], file[offCsum:])
	}
	return writeSnapshot(ctx, s, g, t, func(dir string) ([]store.FileInfo, error) {
		path := filepath.Join(dir, ic.File)
		var err error
		if file == nil {
			err = unix.Mkfifo(path, 0o644)
		} else {
			err = os.WriteFile(path, file, 0o644)
		}
		return []store.FileInfo{{Filename: ic.File, Size: size, Csum: store.CsumHex(csum)}}, err
	})
}
