package pxar

import (
	"bufio"
	"fmt"
	"io"
)

// LinkOffset is where an entry starts in the metadata stream (its FILENAME
// item). It identifies the entry: hard links name their target by it, and
// the Accessor uses it as Entry.ID.
type LinkOffset uint64

// ContentError reports that a file's content reader failed or ended
// early. The encoder padded the file with zeros to its announced size, so
// the archive stays consistent and the encoder remains usable.
type ContentError struct {
	Name    string
	Written uint64 // bytes taken from the reader before the problem
	Size    uint64 // announced size
	Err     error  // the reader's error, or io.ErrUnexpectedEOF when it was short
}

func (e *ContentError) Error() string {
	return fmt.Sprintf("pxar: content of %q: %d of %d bytes read, rest zero-filled: %v", e.Name, e.Written, e.Size, e.Err)
}

func (e *ContentError) Unwrap() error { return e.Err }

// Encoder writes a pxar archive. Create it with NewEncoder, add the root's
// entries in sorted name order, descend with CreateDirectory and leave with
// FinishDirectory, and end with Close. An error from a write to an output
// is sticky: every later call returns it.
type Encoder struct {
	meta       *bufio.Writer
	metaPos    uint64
	payload    io.Writer // nil: single stream
	payloadPos uint64
	refEnd     uint64 // end of the furthest payload reference made
	// [reusedFrom, reusedTo) may be referenced though before payloadPos
	reusedFrom, reusedTo uint64
	stack                []*dirState
	err                  error
	closed               bool
	scratch              []byte
	copyBuf              []byte
	anyOrder             bool // WithAnyOrder
}

type dirState struct {
	items    []goodbyeItem // offsets absolute while the directory is open
	entryOfs uint64        // ENTRY of the directory (0 for the root)
	fileOfs  uint64        // FILENAME of the directory
	hash     uint64
	last     string
	hasLast  bool
	names    map[string]struct{} // the names so far, with WithAnyOrder
}

// NewEncoder starts an archive whose root directory has metadata root.
// With a payload writer it writes a split (version 2) archive: metadata to
// meta, file contents to payload. With payload nil it writes a single
// stream archive with contents inline.
func NewEncoder(meta, payload io.Writer, root *Metadata, opts ...EncoderOption) (*Encoder, error) {
	if !root.Stat.IsDir() {
		return nil, fmt.Errorf("%w: root metadata is not a directory (mode %o)", ErrInvalid, root.Stat.Mode)
	}
	if err := checkMetadata(root); err != nil {
		return nil, err
	}
	e := &Encoder{meta: bufio.NewWriterSize(meta, 64<<10), payload: payload}
	if payload != nil {
		var h [HeaderSize]byte
		putHeader(h[:], TypePayloadStartMarker, 0)
		if err := e.writePayload(h[:]); err != nil {
			return nil, err
		}
		e.scratch = appendU64Item(e.scratch[:0], TypeFormatVersion, 2)
		if err := e.writeMeta(e.scratch); err != nil {
			return nil, err
		}
	}
	for _, o := range opts {
		if err := o(e); err != nil {
			return nil, err
		}
	}
	e.scratch = appendMetadata(e.scratch[:0], root)
	if err := e.writeMeta(e.scratch); err != nil {
		return nil, err
	}
	e.stack = []*dirState{e.newDir(0, 0, 0)}
	return e, nil
}

func (e *Encoder) newDir(entryOfs, fileOfs, hash uint64) *dirState {
	d := &dirState{entryOfs: entryOfs, fileOfs: fileOfs, hash: hash}
	if e.anyOrder {
		d.names = map[string]struct{}{}
	}
	return d
}

// Split reports whether the archive has a separate payload stream.
func (e *Encoder) Split() bool { return e.payload != nil }

// MetadataPosition is the number of bytes of the metadata stream so far.
func (e *Encoder) MetadataPosition() uint64 { return e.metaPos }

// PayloadPosition is the payload stream offset the next payload goes to.
func (e *Encoder) PayloadPosition() uint64 { return e.payloadPos }

// Flush hands the metadata buffered so far to the metadata writer, so
// that everything before MetadataPosition has been written (a caller may
// then still patch it before passing it on).
func (e *Encoder) Flush() error {
	if e.err != nil {
		return e.err
	}
	if err := e.meta.Flush(); err != nil {
		e.err = fmt.Errorf("pxar: flushing metadata: %w", err)
	}
	return e.err
}

// Depth is the number of open directories, the root included.
func (e *Encoder) Depth() int { return len(e.stack) }

func (e *Encoder) writeMeta(b []byte) error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.meta.Write(b); err != nil {
		e.err = fmt.Errorf("pxar: writing metadata at %d: %w", e.metaPos, err)
		return e.err
	}
	e.metaPos += uint64(len(b))
	return nil
}

func (e *Encoder) writePayload(b []byte) error {
	if e.err != nil {
		return e.err
	}
	if _, err := e.payload.Write(b); err != nil {
		e.err = fmt.Errorf("pxar: writing payload at %d: %w", e.payloadPos, err)
		return e.err
	}
	e.payloadPos += uint64(len(b))
	return nil
}

// begin checks the encoder state and the next name of the current
// directory, before anything is written.
func (e *Encoder) begin(name string) (*dirState, error) {
	if e.err != nil {
		return nil, e.err
	}
	if e.closed || len(e.stack) == 0 {
		return nil, fmt.Errorf("%w: encoder closed", ErrState)
	}
	if err := checkName(name); err != nil {
		return nil, err
	}
	d := e.stack[len(e.stack)-1]
	if e.anyOrder {
		if _, dup := d.names[name]; dup {
			return nil, fmt.Errorf("%w: %q", ErrDuplicate, name)
		}
	} else if d.hasLast && name <= d.last {
		return nil, fmt.Errorf("%w: %q after %q", ErrOrder, name, d.last)
	}
	return d, nil
}

// addEntry writes FILENAME, the metadata (if any) and one final item,
// and records the goodbye item.
func (e *Encoder) addEntry(d *dirState, name string, m *Metadata, typ uint64, data ...[]byte) (LinkOffset, error) {
	fileOfs := e.metaPos
	e.scratch = appendItem(e.scratch[:0], TypeFilename, []byte(name), []byte{0})
	if m != nil {
		e.scratch = appendMetadata(e.scratch, m)
	}
	if typ != 0 {
		e.scratch = appendItem(e.scratch, typ, data...)
	}
	if err := e.writeMeta(e.scratch); err != nil {
		return 0, err
	}
	d.push(name, fileOfs, e.metaPos-fileOfs)
	return LinkOffset(fileOfs), nil
}

func (d *dirState) push(name string, fileOfs, size uint64) {
	d.items = append(d.items, goodbyeItem{hash: HashFilename(name), offset: fileOfs, size: size})
	d.added(name)
}

// added records name as the directory's latest entry.
func (d *dirState) added(name string) {
	d.last, d.hasLast = name, true
	if d.names != nil {
		d.names[name] = struct{}{}
	}
}

func checkType(m *Metadata, ok bool, what string) error {
	if !ok {
		return fmt.Errorf("%w: %s with mode %o", ErrInvalid, what, m.Stat.Mode)
	}
	return checkMetadata(m)
}

// AddSymlink adds a symbolic link to target.
func (e *Encoder) AddSymlink(name string, m *Metadata, target string) error {
	d, err := e.begin(name)
	if err != nil {
		return err
	}
	if err := checkType(m, m.Stat.IsSymlink(), "symlink"); err != nil {
		return err
	}
	if target == "" || len(target) > MaxPathLen || containsNUL(target) {
		return fmt.Errorf("%w: symlink target %q", ErrInvalid, target)
	}
	_, err = e.addEntry(d, name, m, TypeSymlink, []byte(target), []byte{0})
	return err
}

// AddDevice adds a character or block device node.
func (e *Encoder) AddDevice(name string, m *Metadata, dev Device) error {
	d, err := e.begin(name)
	if err != nil {
		return err
	}
	if err := checkType(m, m.Stat.IsDevice(), "device"); err != nil {
		return err
	}
	_, err = e.addEntry(d, name, m, TypeDevice, le.AppendUint64(le.AppendUint64(nil, dev.Major), dev.Minor))
	return err
}

// AddFIFO adds a named pipe.
func (e *Encoder) AddFIFO(name string, m *Metadata) error {
	d, err := e.begin(name)
	if err != nil {
		return err
	}
	if err := checkType(m, m.Stat.IsFIFO(), "fifo"); err != nil {
		return err
	}
	_, err = e.addEntry(d, name, m, 0)
	return err
}

// AddSocket adds a socket.
func (e *Encoder) AddSocket(name string, m *Metadata) error {
	d, err := e.begin(name)
	if err != nil {
		return err
	}
	if err := checkType(m, m.Stat.IsSocket(), "socket"); err != nil {
		return err
	}
	_, err = e.addEntry(d, name, m, 0)
	return err
}

// AddHardlink adds a hard link to the regular file added earlier at
// target (the LinkOffset AddFile or AddFileRef returned); path is the
// target's path in the archive, kept for tools that show it.
func (e *Encoder) AddHardlink(name, path string, target LinkOffset) error {
	d, err := e.begin(name)
	if err != nil {
		return err
	}
	if uint64(target) >= e.metaPos {
		return fmt.Errorf("%w: hard link %q to offset %d, not before %d", ErrInvalid, name, target, e.metaPos)
	}
	if path == "" || len(path) > MaxPathLen || containsNUL(path) {
		return fmt.Errorf("%w: hard link target path %q", ErrInvalid, path)
	}
	rel := le.AppendUint64(nil, e.metaPos-uint64(target))
	_, err = e.addEntry(d, name, nil, TypeHardlink, rel, []byte(path), []byte{0})
	return err
}

// CreateDirectory starts a subdirectory of the current directory; its
// entries follow, and FinishDirectory ends it.
func (e *Encoder) CreateDirectory(name string, m *Metadata) error {
	d, err := e.begin(name)
	if err != nil {
		return err
	}
	if err := checkType(m, m.Stat.IsDir(), "directory"); err != nil {
		return err
	}
	fileOfs := e.metaPos
	e.scratch = appendItem(e.scratch[:0], TypeFilename, []byte(name), []byte{0})
	entryOfs := fileOfs + uint64(len(e.scratch))
	e.scratch = appendMetadata(e.scratch, m)
	if err := e.writeMeta(e.scratch); err != nil {
		return err
	}
	d.added(name)
	e.stack = append(e.stack, e.newDir(entryOfs, fileOfs, HashFilename(name)))
	return nil
}

// FinishDirectory ends the directory CreateDirectory started: it writes
// its goodbye table.
func (e *Encoder) FinishDirectory() error {
	if e.err != nil {
		return e.err
	}
	if e.closed || len(e.stack) < 2 {
		return fmt.Errorf("%w: FinishDirectory without an open subdirectory", ErrState)
	}
	d := e.stack[len(e.stack)-1]
	if err := e.writeGoodbye(d); err != nil {
		return err
	}
	e.stack = e.stack[:len(e.stack)-1]
	p := e.stack[len(e.stack)-1]
	p.items = append(p.items, goodbyeItem{hash: d.hash, offset: d.fileOfs, size: e.metaPos - d.fileOfs})
	return nil
}

// writeGoodbye writes the GOODBYE item of d.
func (e *Encoder) writeGoodbye(d *dirState) error {
	b := encodeGoodbye(d.items, d.entryOfs, e.metaPos)
	d.items = nil
	return e.writeMeta(b)
}

// Close ends the archive: it writes the root's goodbye table and the
// payload tail marker and flushes the metadata writer. It does not close
// the writers.
func (e *Encoder) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.closed {
		return fmt.Errorf("%w: encoder closed twice", ErrState)
	}
	if len(e.stack) != 1 {
		return fmt.Errorf("%w: %d directories not finished", ErrState, len(e.stack)-1)
	}
	if e.payload != nil && e.refEnd > e.payloadPos {
		return fmt.Errorf("%w: payload references reach %d, payload stream ends at %d", ErrState, e.refEnd, e.payloadPos)
	}
	if err := e.writeGoodbye(e.stack[0]); err != nil {
		return err
	}
	e.stack = nil
	e.closed = true
	if e.payload != nil {
		var h [HeaderSize]byte
		putHeader(h[:], TypePayloadTailMarker, 0)
		if err := e.writePayload(h[:]); err != nil {
			return err
		}
	}
	if err := e.meta.Flush(); err != nil {
		e.err = fmt.Errorf("pxar: flushing metadata: %w", err)
		return e.err
	}
	return nil
}
