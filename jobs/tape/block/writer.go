package block

import (
	"fmt"
	"io"
)

// Device receives the blocks of one tape file, in order.
type Device interface {
	// WriteBlock writes one block of exactly Size bytes. leom reports that
	// the block went into the early-warning zone near the end of the
	// media; the block itself was written. A full media fails with an
	// error matching ErrEndOfMedia.
	WriteBlock(b []byte) (leom bool, err error)
	// WriteFilemark ends the file.
	WriteFilemark() error
}

// Writer packs a byte stream into blocks for a Device. Once the device
// reported LEOM, Write stops at the block boundary and returns ErrLEOM;
// the caller then has room for Finish (one more block) and must move to
// another tape for the rest.
type Writer struct {
	dev      Device
	buf      []byte
	pos      int // payload bytes buffered in buf
	seq      uint32
	leom     bool
	written  int64 // bytes of blocks handed to the device
	finished bool
	err      error // sticky device error
}

var _ io.Writer = (*Writer)(nil)

// NewWriter returns a Writer that writes blocks to dev.
func NewWriter(dev Device) *Writer {
	return &Writer{dev: dev, buf: make([]byte, Size)}
}

// Write buffers p and writes every block it completes. It returns ErrLEOM
// (with n < len(p) unless the LEOM block consumed all of p) once the
// device reported the logical end of media.
func (w *Writer) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := w.check(); err != nil {
			return n, err
		}
		c := copy(w.buf[HeaderSize+w.pos:], p)
		w.pos += c
		n += c
		p = p[c:]
		if w.pos == PayloadSize {
			if err := w.flush(0); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

func (w *Writer) check() error {
	switch {
	case w.err != nil:
		return w.err
	case w.finished:
		return ErrFinished
	case w.leom:
		return ErrLEOM
	}
	return nil
}

func (w *Writer) flush(flags uint8) error {
	clear(w.buf[HeaderSize+w.pos:])
	Header{Flags: flags, Size: w.pos, Seq: w.seq}.Put(w.buf)
	leom, err := w.dev.WriteBlock(w.buf)
	if err != nil {
		w.err = fmt.Errorf("write block %d: %w", w.seq, err)
		return w.err
	}
	w.seq++
	w.pos = 0
	w.written += Size
	if leom {
		w.leom = true
	}
	return nil
}

// LEOM reports whether the device reported the logical end of media.
func (w *Writer) LEOM() bool { return w.leom }

// BytesWritten returns the bytes of blocks written to the device so far.
func (w *Writer) BytesWritten() int64 { return w.written }

// Blocks returns the number of blocks written so far.
func (w *Writer) Blocks() int { return int(w.seq) }

// Finish writes the buffered data in the end-of-stream block (marked
// incomplete if asked) and the file mark. It is allowed after LEOM.
func (w *Writer) Finish(incomplete bool) error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		return ErrFinished
	}
	flags := FlagEndOfStream
	if incomplete {
		flags |= FlagIncomplete
	}
	if err := w.flush(flags); err != nil {
		return err
	}
	w.finished = true
	if err := w.dev.WriteFilemark(); err != nil {
		w.err = fmt.Errorf("write file mark: %w", err)
		return w.err
	}
	return nil
}

// Finished reports whether Finish completed.
func (w *Writer) Finished() bool { return w.finished && w.err == nil }
