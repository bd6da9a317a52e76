package pbscheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
	"strings"
)

// Index magics (pbs-datastore/src/file_formats.rs).
var (
	magicFixed   = [8]byte{47, 127, 65, 237, 145, 253, 15, 205}
	magicDynamic = [8]byte{28, 145, 78, 165, 25, 186, 179, 205}
)

const (
	indexHeader  = 4096
	dynEntrySize = 40 // end_offset u64 | digest[32]
)

// Chunk is one entry of an index: its digest and the byte range of the
// archive's data it holds.
type Chunk struct {
	Digest     [32]byte
	Start, End uint64
}

// Index is a parsed .didx or .fidx file.
type Index struct {
	Path    string
	Dynamic bool
	Csum    [32]byte // index_csum as computed (and found equal to the stored one)
	Size    uint64   // data size
	Chunks  []Chunk
}

// ReadIndex reads and checks an index file: magic, header size, entry
// layout, index_csum. A dynamic index's ends must increase strictly; a
// fixed index has ceil(size/chunk_size) digests.
func ReadIndex(path string) (*Index, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	x, err := parseIndex(b, strings.HasSuffix(path, ".didx"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	x.Path = path
	return x, nil
}

func parseIndex(b []byte, dynamic bool) (*Index, error) {
	if len(b) < indexHeader {
		return nil, fmt.Errorf("index of %d bytes: shorter than its 4096-byte header", len(b))
	}
	le := binary.LittleEndian
	stored := [32]byte(b[32:64]) // magic[8] uuid[16] ctime[8] index_csum[32]
	x := &Index{Dynamic: dynamic}
	body := b[indexHeader:]
	if dynamic {
		if [8]byte(b[:8]) != magicDynamic {
			return nil, fmt.Errorf("not a dynamic index: magic %v", b[:8])
		}
		if !allZero(b[64:indexHeader]) {
			return nil, fmt.Errorf("dynamic index: reserved header bytes are not zero")
		}
		if len(body)%dynEntrySize != 0 {
			return nil, fmt.Errorf("dynamic index: %d entry bytes, not a multiple of %d", len(body), dynEntrySize)
		}
		var start uint64
		for i := 0; i < len(body); i += dynEntrySize {
			end := le.Uint64(body[i:])
			if end <= start {
				return nil, fmt.Errorf("dynamic index entry %d: end %d not after %d", i/dynEntrySize, end, start)
			}
			x.Chunks = append(x.Chunks, Chunk{Digest: [32]byte(body[i+8 : i+40]), Start: start, End: end})
			start = end
		}
		x.Size = start
	} else {
		if [8]byte(b[:8]) != magicFixed {
			return nil, fmt.Errorf("not a fixed index: magic %v", b[:8])
		}
		if !allZero(b[80:indexHeader]) {
			return nil, fmt.Errorf("fixed index: reserved header bytes are not zero")
		}
		size, cs := le.Uint64(b[64:]), le.Uint64(b[72:])
		if cs == 0 {
			return nil, fmt.Errorf("fixed index: chunk size 0")
		}
		n := (size + cs - 1) / cs
		if uint64(len(body)) != 32*n {
			return nil, fmt.Errorf("fixed index: %d digest bytes for size %d in chunks of %d (want %d)", len(body), size, cs, 32*n)
		}
		for i := uint64(0); i < n; i++ {
			end := min((i+1)*cs, size)
			x.Chunks = append(x.Chunks, Chunk{Digest: [32]byte(body[32*i : 32*i+32]), Start: i * cs, End: end})
		}
		x.Size = size
	}
	x.Csum = sha256.Sum256(body)
	if x.Csum != stored {
		return nil, fmt.Errorf("index_csum: stored %x, SHA-256 of the entries %x", stored, x.Csum)
	}
	return x, nil
}

func allZero(b []byte) bool { return len(bytes.Trim(b, "\x00")) == 0 }
