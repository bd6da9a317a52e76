package chunk

import (
	"errors"
	"fmt"
	"math/bits"
)

// Chunker finds chunk boundaries in a stream that is fed to it piecewise.
//
// Scan looks at the next bytes of the stream and returns the number of
// bytes of data that complete the current chunk, or 0 when data holds no
// boundary (the whole of data belongs to the current chunk and the caller
// should feed more). After a non-zero return the chunker has started a new
// chunk; the caller feeds data[n:] next. Cut points do not depend on how
// the stream is split into calls.
type Chunker interface {
	Scan(data []byte) int
	Reset()
}

// Size limits shared by the chunkers.
const (
	MinChunkSize     = 64 << 10
	MaxChunkSize     = 16 << 20
	DefaultChunkSize = 4 << 20
)

// ErrChunkSize is returned for a chunk size that is not a power of two in
// [MinChunkSize, MaxChunkSize].
var ErrChunkSize = errors.New("chunk size must be a power of two from 64 KiB to 16 MiB")

// CheckChunkSize validates a fixed chunk size or a buzhash average.
func CheckChunkSize(size int) error {
	if size < MinChunkSize || size > MaxChunkSize || bits.OnesCount(uint(size)) != 1 {
		return fmt.Errorf("%d: %w", size, ErrChunkSize)
	}
	return nil
}

// Fixed cuts every Size bytes. Size must pass CheckChunkSize.
type Fixed struct {
	size int
	fill int
}

var _ Chunker = (*Fixed)(nil)

// NewFixed returns a fixed-size chunker.
func NewFixed(size int) (*Fixed, error) {
	if err := CheckChunkSize(size); err != nil {
		return nil, err
	}
	return &Fixed{size: size}, nil
}

// Scan implements Chunker.
func (f *Fixed) Scan(data []byte) int {
	need := f.size - f.fill
	if len(data) < need {
		f.fill += len(data)
		return 0
	}
	f.fill = 0
	return need
}

// Reset implements Chunker.
func (f *Fixed) Reset() { f.fill = 0 }
