package pxar

import "fmt"

// EncoderOption configures NewEncoder.
type EncoderOption func(*Encoder) error

// WithPrelude stores data (PBS: JSON with the exclude patterns) in a
// PRELUDE item after the format version; split archives only.
func WithPrelude(data []byte) EncoderOption {
	return func(e *Encoder) error {
		if e.payload == nil {
			return fmt.Errorf("%w: a prelude needs a split archive", ErrState)
		}
		e.scratch = appendItem(e.scratch[:0], TypePrelude, data)
		return e.writeMeta(e.scratch)
	}
}

// WithAnyOrder accepts the entries of a directory in any order instead
// of sorted by name, as pxar itself does (PBS writes tape snapshot
// archives in manifest order); a name repeated in a directory is refused
// with ErrDuplicate.
func WithAnyOrder() EncoderOption {
	return func(e *Encoder) error {
		e.anyOrder = true
		return nil
	}
}

// WithCopyBuffer makes AddFile copy file contents through buf (default:
// a 1 MiB buffer of its own); a writer that packs fixed-size blocks
// copies fastest through a buffer of its block size.
func WithCopyBuffer(buf []byte) EncoderOption {
	return func(e *Encoder) error {
		if len(buf) == 0 {
			return fmt.Errorf("%w: empty copy buffer", ErrState)
		}
		e.copyBuf = buf
		return nil
	}
}
