package hostile

import (
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

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
