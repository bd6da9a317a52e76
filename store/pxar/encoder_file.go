package pxar

import (
	"errors"
	"fmt"
	"io"
)

const (
	copyBufSize = 1 << 20
	maxFileSize = 1 << 62
)

// AddFile adds a regular file of size bytes read from r. In a split
// archive the content goes to the payload stream (a PAYLOAD item) and the
// metadata gets a PAYLOAD_REF to it; otherwise the PAYLOAD item is inline.
// Exactly size bytes are taken from r. If r fails or ends early, the rest
// is zero-filled and the error is a *ContentError: the entry is complete
// and the returned LinkOffset valid.
func (e *Encoder) AddFile(name string, m *Metadata, size uint64, r io.Reader) (LinkOffset, error) {
	d, err := e.begin(name)
	if err != nil {
		return 0, err
	}
	if err := checkType(m, m.Stat.IsRegular(), "regular file"); err != nil {
		return 0, err
	}
	if size > maxFileSize {
		return 0, fmt.Errorf("%w: file %q size %d too large", ErrInvalid, name, size)
	}
	if e.payload != nil && e.payloadPos < e.refEnd {
		return 0, fmt.Errorf("%w: AddFile at payload offset %d inside referenced payload (up to %d): advance past it first",
			ErrState, e.payloadPos, e.refEnd)
	}
	fileOfs := e.metaPos
	e.scratch = appendItem(e.scratch[:0], TypeFilename, []byte(name), []byte{0})
	e.scratch = appendMetadata(e.scratch, m)
	var h [HeaderSize]byte
	putHeader(h[:], TypePayload, size)
	if e.payload == nil {
		e.scratch = append(e.scratch, h[:]...)
		if err := e.writeMeta(e.scratch); err != nil {
			return 0, err
		}
		cerr := e.copyContent(e.writeMeta, name, size, r)
		if cerr != nil && e.err != nil {
			return 0, e.err
		}
		d.push(name, fileOfs, e.metaPos-fileOfs)
		return LinkOffset(fileOfs), cerr
	}
	ref := e.payloadPos
	if err := e.writePayload(h[:]); err != nil {
		return 0, err
	}
	e.scratch = appendU64Item(e.scratch, TypePayloadRef, ref, size)
	if err := e.writeMeta(e.scratch); err != nil {
		return 0, err
	}
	// pxar counts the content in the goodbye item's size even though it
	// lives in the payload stream; do the same to stay byte-compatible.
	metaSize := e.metaPos - fileOfs
	var cerr error
	if f, ok := e.payload.(ContentFiller); ok {
		cerr = e.fillContent(f, name, size, r)
	} else {
		cerr = e.copyContent(e.writePayload, name, size, r)
	}
	if cerr != nil && e.err != nil {
		return 0, e.err
	}
	d.push(name, fileOfs, metaSize+size)
	return LinkOffset(fileOfs), cerr
}

// copyContent writes size bytes of r with write, zero-filling what r does
// not deliver. It returns a *ContentError for a reader problem, or the
// (sticky) write error.
func (e *Encoder) copyContent(write func([]byte) error, name string, size uint64, r io.Reader) error {
	buf := e.buffer()
	var done uint64
	var rerr error
	for done < size {
		n := min(uint64(len(buf)), size-done)
		k, err := io.ReadFull(r, buf[:n])
		if k > 0 {
			if werr := write(buf[:k]); werr != nil {
				return werr
			}
			done += uint64(k)
		}
		if err != nil {
			rerr = err
			break
		}
	}
	return e.zeroFill(write, name, size, done, rerr)
}

func (e *Encoder) buffer() []byte {
	if e.copyBuf == nil {
		e.copyBuf = make([]byte, copyBufSize)
	}
	return e.copyBuf
}

// ContentFiller is a payload writer that reads file content straight
// into its own buffer, sparing the copy out of a read buffer (on a tree
// of small files that copy was a tenth of a backup's CPU time). Fill
// reads at most n bytes from r with one Read call and takes what was read
// as written. It returns the bytes read, the read's error and the
// writer's (sticky) error.
type ContentFiller interface {
	Fill(r io.Reader, n int) (read int, readErr, writeErr error)
}

// maxEmptyReads is how many reads in a row may return nothing, without
// an error, before the reader is taken as stuck (io.ErrNoProgress).
const maxEmptyReads = 100

// fillContent is copyContent into a ContentFiller payload stream.
func (e *Encoder) fillContent(f ContentFiller, name string, size uint64, r io.Reader) error {
	var done uint64
	var rerr error
	for empty := 0; done < size && rerr == nil; {
		k, err, werr := f.Fill(r, int(min(copyBufSize, size-done)))
		done += uint64(k)
		e.payloadPos += uint64(k)
		if werr != nil {
			e.err = fmt.Errorf("pxar: writing payload at %d: %w", e.payloadPos, werr)
			return e.err
		}
		if empty = empty + 1; k > 0 {
			empty = 0
		}
		switch {
		case done == size: // all there: a final error does not count (io.ReadFull)
		case err != nil:
			rerr = err
		case empty >= maxEmptyReads:
			rerr = io.ErrNoProgress
		}
	}
	return e.zeroFill(e.writePayload, name, size, done, rerr)
}

// zeroFill writes zeros from done up to size after the read error rerr
// (nil: nothing to fill) and returns the *ContentError, or the (sticky)
// write error.
func (e *Encoder) zeroFill(write func([]byte) error, name string, size, done uint64, rerr error) error {
	if rerr == nil {
		return nil
	}
	if errors.Is(rerr, io.EOF) {
		rerr = io.ErrUnexpectedEOF
	}
	read := done
	buf := e.buffer()
	clear(buf)
	for done < size {
		n := min(uint64(len(buf)), size-done)
		if err := write(buf[:n]); err != nil {
			return err
		}
		done += n
	}
	return &ContentError{Name: name, Written: read, Size: size, Err: rerr}
}

// AddFileRef adds a regular file of size bytes whose PAYLOAD item (header
// and content) the caller places at payloadOffset of the payload stream
// itself, e.g. by reusing chunks of a previous backup's payload stream.
// As in pxar, payloadOffset must not lie before PayloadPosition (unless
// in the range declared with Reused): add the references first, then put
// the bytes in the payload stream and account for them with
// AdvancePayload. Close fails if references point past the
// payload stream's end. Split archives only.
func (e *Encoder) AddFileRef(name string, m *Metadata, payloadOffset, size uint64) (LinkOffset, error) {
	d, err := e.begin(name)
	if err != nil {
		return 0, err
	}
	if e.payload == nil {
		return 0, fmt.Errorf("%w: payload reference for %q", ErrNoPayload, name)
	}
	if err := checkType(m, m.Stat.IsRegular(), "regular file"); err != nil {
		return 0, err
	}
	if payloadOffset < e.payloadPos && (payloadOffset < e.reusedFrom || payloadOffset >= e.reusedTo) {
		return 0, fmt.Errorf("%w: payload reference for %q to offset %d before payload position %d",
			ErrState, name, payloadOffset, e.payloadPos)
	}
	if size > maxFileSize || payloadOffset > maxFileSize {
		return 0, fmt.Errorf("%w: payload reference for %q at %d size %d too large", ErrInvalid, name, payloadOffset, size)
	}
	ref := le.AppendUint64(le.AppendUint64(nil, payloadOffset), size)
	off, err := e.addEntry(d, name, m, TypePayloadRef, ref)
	if err != nil {
		return 0, err
	}
	e.refEnd = max(e.refEnd, payloadOffset+HeaderSize+size)
	return off, nil
}

// Reused declares that the payload stream from offset from up to
// PayloadPosition holds a previous stream's PAYLOAD items placed there
// as they are (reused chunks): AddFileRef accepts references that start
// in that range, until the next call. The caller answers for them
// pointing at whole PAYLOAD items.
func (e *Encoder) Reused(from uint64) {
	e.reusedFrom, e.reusedTo = min(from, e.payloadPos), e.payloadPos
}

// AdvancePayload accounts for n bytes the caller appended to the payload
// stream itself (see AddFileRef).
func (e *Encoder) AdvancePayload(n uint64) error {
	if e.err != nil {
		return e.err
	}
	if e.payload == nil {
		return ErrNoPayload
	}
	if e.closed {
		return fmt.Errorf("%w: encoder closed", ErrState)
	}
	if n > maxFileSize || e.payloadPos > maxFileSize {
		return fmt.Errorf("%w: payload advance by %d overflows", ErrInvalid, n)
	}
	e.payloadPos += n
	return nil
}
