package hostile

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
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

// Content returns what a good index at path holds: the data of the
// chunks of c it lists, in its order.
func Content(path string, c []Chunk) ([]byte, error) {
	x, err := store.OpenIndex(path)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	data := map[chunk.Digest][]byte{}
	for _, ch := range c {
		data[ch.Digest] = ch.Data
	}
	var out []byte
	for i := range x.Len() {
		d, _, _ := x.Chunk(i)
		b, ok := data[d]
		if !ok {
			return nil, fmt.Errorf("%s: entry %d: chunk %s is not among those given", path, i, d)
		}
		out = append(out, b...)
	}
	return out, x.Err()
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

// WriteGood writes a good snapshot of group g at t whose disk.img.fidx
// and data.didx both list chunks c in order (all of ChunkSize bytes but
// the last). It returns the data both archives hold.
func WriteGood(ctx context.Context, s *store.Store, g store.Group, t time.Time, c []Chunk) (store.Snapshot, []byte, error) {
	var want []byte
	for _, ch := range c {
		want = append(want, ch.Data...)
	}
	snap, err := writeSnapshot(ctx, s, g, t, func(dir string) ([]store.FileInfo, error) {
		fw, err := store.NewFixedWriter(filepath.Join(dir, FixedFile), ChunkSize)
		if err != nil {
			return nil, err
		}
		dw, err := store.NewDynamicWriter(filepath.Join(dir, DynamicFile))
		if err != nil {
			fw.Abort()
			return nil, err
		}
		for _, ch := range c {
			fw.Add(ch.Digest, len(ch.Data))
			dw.Add(ch.Digest, len(ch.Data))
		}
		fcsum, fsize, ferr := fw.Close()
		dcsum, dsize, derr := dw.Close()
		return []store.FileInfo{
			{Filename: FixedFile, Size: uint64(fsize), Csum: store.CsumHex(fcsum)},
			{Filename: DynamicFile, Size: uint64(dsize), Csum: store.CsumHex(dcsum)},
		}, errors.Join(ferr, derr)
	})
	return snap, want, err
}

// WriteCryptLie writes a snapshot of group g at t whose data.didx lists
// the plain chunks c while its manifest says the file is encrypted: the
// manifest lies, the chunks are good.
func WriteCryptLie(ctx context.Context, s *store.Store, g store.Group, t time.Time, c []Chunk) (store.Snapshot, error) {
	return writeSnapshot(ctx, s, g, t, func(dir string) ([]store.FileInfo, error) {
		dw, err := store.NewDynamicWriter(filepath.Join(dir, DynamicFile))
		if err != nil {
			return nil, err
		}
		for _, ch := range c {
			dw.Add(ch.Digest, len(ch.Data))
		}
		csum, size, err := dw.Close()
		return []store.FileInfo{{Filename: DynamicFile, CryptMode: "encrypt", Size: uint64(size), Csum: store.CsumHex(csum)}}, err
	})
}

// writeSnapshot starts a backup, lets write fill its directory and
// finishes it with the files write returns.
func writeSnapshot(ctx context.Context, s *store.Store, g store.Group, t time.Time, write func(dir string) ([]store.FileInfo, error)) (store.Snapshot, error) {
	b, err := s.StartBackup(ctx, g, t)
	if err != nil {
		return store.Snapshot{}, err
	}
	b.Sync = store.SyncNone
	files, err := write(b.Dir())
	for _, f := range files {
		if err == nil {
			err = b.AddFile(f)
		}
	}
	if err != nil {
		b.Abort()
		return store.Snapshot{}, err
	}
	if err := b.Finish(); err != nil {
		return store.Snapshot{}, err
	}
	return b.Snapshot(), nil
}

// Index layout (PBS file_formats.rs), written here byte by byte so that
// nothing the store's writers check stands in the way.
const (
	indexHeader  = 4096
	didxEntry    = 8 + chunk.DigestSize
	offCsum      = 32
	offSize      = 64
	offChunkSize = 72
)

var (
	magicFixed   = [8]byte{47, 127, 65, 237, 145, 253, 15, 205}
	magicDynamic = [8]byte{28, 145, 78, 165, 25, 186, 179, 205}
)

// sized is a chunk with the size an index gives it.
type sized struct {
	c    Chunk
	size uint64
}

// ends pairs chunks with the sizes the index gives them: c0, size0, ...
func ends(args ...any) []sized {
	var out []sized
	for i := 0; i+1 < len(args); i += 2 {
		out = append(out, sized{args[i].(Chunk), uint64(args[i+1].(int))})
	}
	return out
}

// didx returns a dynamic index listing entries with the sizes given, and
// its data size.
func didx(entries []sized) ([]byte, uint64, error) {
	var endsAt []uint64
	var cs []Chunk
	var end uint64
	for _, e := range entries {
		end += e.size
		endsAt = append(endsAt, end)
		cs = append(cs, e.c)
	}
	return didxRaw(endsAt, cs...)
}

// didxRaw returns a dynamic index of entries ending at endsAt (as given,
// in any order) and its data size (the last end).
func didxRaw(endsAt []uint64, c ...Chunk) ([]byte, uint64, error) {
	if len(endsAt) != len(c) {
		return nil, 0, fmt.Errorf("%d ends for %d chunks", len(endsAt), len(c))
	}
	body := make([]byte, 0, len(c)*didxEntry)
	for i, end := range endsAt {
		body = binary.LittleEndian.AppendUint64(body, end)
		body = append(body, c[i].Digest[:]...)
	}
	var size uint64
	if len(endsAt) > 0 {
		size = endsAt[len(endsAt)-1]
	}
	return append(header(magicDynamic, body), body...), size, nil
}

// fidx returns a fixed index whose header says size and chunkSize,
// listing digests d (however many the header calls for), and size.
func fidx(size, chunkSize uint64, d ...chunk.Digest) ([]byte, uint64, error) {
	var body []byte
	for _, x := range d {
		body = append(body, x[:]...)
	}
	h := header(magicFixed, body)
	binary.LittleEndian.PutUint64(h[offSize:], size)
	binary.LittleEndian.PutUint64(h[offChunkSize:], chunkSize)
	return append(h, body...), size, nil
}

// header returns an index header with magic, a random UUID, the time and
// the checksum of body.
func header(magic [8]byte, body []byte) []byte {
	h := make([]byte, indexHeader)
	copy(h, magic[:])
	crand.Read(h[8:24])
	binary.LittleEndian.PutUint64(h[24:], uint64(time.Now().Unix()))
	sum := sha256.Sum256(body)
	copy(h[offCsum:], sum[:])
	return h
}
