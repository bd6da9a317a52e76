package block

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
)

// Block geometry (pbs-tape PROXMOX_TAPE_BLOCK_SIZE).
const (
	Size        = 256 << 10
	HeaderSize  = 16
	PayloadSize = Size - HeaderSize
)

// Magic starts every block (PROXMOX_TAPE_BLOCK_HEADER_MAGIC_1_0).
var Magic = [8]byte{220, 189, 175, 202, 235, 160, 165, 40}

// Block header flags.
const (
	FlagEndOfStream uint8 = 1
	FlagIncomplete  uint8 = 2
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrForeign: the block does not start with the PBS block magic.
	ErrForeign = errors.New("foreign tape block (not written by PBS/cairn)")
	// ErrCorrupt: the header is ours but its fields are impossible.
	ErrCorrupt = errors.New("corrupt tape block")
	// ErrTruncated: the file ends without an end-of-stream block or in the
	// middle of a block.
	ErrTruncated = errors.New("truncated tape file")
	// ErrEmptyFile: the file holds no block at all (a bare file mark).
	ErrEmptyFile = errors.New("empty tape file")
	// ErrLEOM is returned by Writer.Write once the drive reported the
	// logical end of media and the writer stops at block boundaries.
	ErrLEOM = errors.New("logical end of media reached")
	// ErrFinished: a write after Finish.
	ErrFinished = errors.New("tape file already finished")
)

// ErrEndOfMedia is returned by a Device that has no room for another
// block; it matches syscall.ENOSPC with errors.Is.
var ErrEndOfMedia error = endOfMedia{}

type endOfMedia struct{}

func (endOfMedia) Error() string        { return "end of media (no space left on tape)" }
func (endOfMedia) Is(target error) bool { return target == syscall.ENOSPC }

// Header is the decoded 16-byte block header.
type Header struct {
	Flags uint8
	Size  int // payload bytes in this block
	Seq   uint32
}

// EndOfStream reports whether this is the last block of the file.
func (h Header) EndOfStream() bool { return h.Flags&FlagEndOfStream != 0 }

// Incomplete reports whether the writer marked the stream incomplete.
func (h Header) Incomplete() bool { return h.Flags&FlagIncomplete != 0 }

// Put encodes h with the magic into b[:HeaderSize].
func (h Header) Put(b []byte) {
	copy(b[:8], Magic[:])
	b[8] = h.Flags
	b[9] = byte(h.Size)
	b[10] = byte(h.Size >> 8)
	b[11] = byte(h.Size >> 16)
	binary.LittleEndian.PutUint32(b[12:16], h.Seq)
}

// ParseHeader decodes and checks the header at the start of a block.
func ParseHeader(b []byte) (Header, error) {
	if len(b) < HeaderSize {
		return Header{}, fmt.Errorf("%w: %d bytes, header needs %d", ErrTruncated, len(b), HeaderSize)
	}
	if [8]byte(b[:8]) != Magic {
		return Header{}, fmt.Errorf("%w: magic % x", ErrForeign, b[:8])
	}
	h := Header{
		Flags: b[8],
		Size:  int(b[9]) | int(b[10])<<8 | int(b[11])<<16,
		Seq:   binary.LittleEndian.Uint32(b[12:16]),
	}
	if h.Flags&^(FlagEndOfStream|FlagIncomplete) != 0 {
		return h, fmt.Errorf("%w: unknown flags %#02x", ErrCorrupt, h.Flags)
	}
	if h.Size > PayloadSize {
		return h, fmt.Errorf("%w: payload size %d > %d", ErrCorrupt, h.Size, PayloadSize)
	}
	if h.Size == 0 && !h.EndOfStream() {
		return h, fmt.Errorf("%w: zero payload size in a block that does not end the stream", ErrCorrupt)
	}
	return h, nil
}
