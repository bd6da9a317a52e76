package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/jobs/tape/block"
	"github.com/cairnfs/cairn/store/pxar"
)

type snapshotArchiveHeader struct {
	Snapshot string `json:"snapshot"` // [ns/NAME/…]TYPE/ID/TIME
	Store    string `json:"store"`
}

// WriteSnapshotArchive writes the snapshot's files, read from fsys in the
// given order (PBS: the manifest first, then the manifest's files, then
// client.log.blob), as one snapshot archive: a pxar v1 directory. It
// returns done=false when the tape reached LEOM first; the file is then
// finished marked incomplete and the archive must be written again on
// the next tape. On another error the file is left unfinished.
func WriteSnapshotArchive(w TapeWriter, store, snapshot string, fsys fs.FS, files []string) (UUID, bool, error) {
	magic := MagicSnapshotArchive
	if strings.HasPrefix(snapshot, "ns/") {
		magic = MagicSnapshotNS
	}
	h, err := writeHeader(w, magic, snapshotArchiveHeader{Snapshot: snapshot, Store: store})
	if err == nil && w.LEOM() {
		err = block.ErrLEOM
	}
	if err == nil {
		err = encodeSnapshot(w, fsys, files)
	}
	if errors.Is(err, block.ErrLEOM) {
		if ferr := w.Finish(true); ferr != nil {
			return h.UUID, false, fmt.Errorf("snapshot archive %s: %w", snapshot, ferr)
		}
		return h.UUID, false, nil
	}
	if err != nil {
		return h.UUID, false, fmt.Errorf("snapshot archive %s: %w", snapshot, err)
	}
	if err := w.Finish(false); err != nil {
		return h.UUID, false, fmt.Errorf("snapshot archive %s: %w", snapshot, err)
	}
	return h.UUID, true, nil
}

// maxFilename bounds the names of a snapshot's files (PBS: 255 bytes,
// as any Linux file name).
const maxFilename = 255

func checkFilename(name string) error {
	if !pxar.ValidName(name) || len(name) > maxFilename {
		return fmt.Errorf("invalid file name %q", name)
	}
	return nil
}

// encodeSnapshot writes the files as a pxar v1 archive of one directory,
// in the given order, with store/pxar's encoder.
func encodeSnapshot(w io.Writer, fsys fs.FS, files []string) error {
	root := &pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFDIR | 0o664}}
	enc, err := pxar.NewEncoder(w, nil, root, pxar.WithAnyOrder(),
		pxar.WithCopyBuffer(make([]byte, block.PayloadSize)))
	if err != nil {
		return err
	}
	for _, name := range files {
		if err := encodeFile(enc, fsys, name); err != nil {
			return err
		}
	}
	return enc.Close()
}

func encodeFile(enc *pxar.Encoder, fsys fs.FS, name string) error {
	if err := checkFilename(name); err != nil {
		return err
	}
	f, err := fsys.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("file %q is not a regular file", name)
	}
	size := fi.Size()
	if _, err := enc.AddFile(name, metadataOf(fi), uint64(size), f); err != nil {
		var ce *pxar.ContentError
		if errors.As(err, &ce) && errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("file %q shrank while reading (%d of %d bytes)", name, ce.Written, size)
		}
		return err
	}
	var extra [1]byte
	if m, _ := f.Read(extra[:]); m > 0 {
		return fmt.Errorf("file %q grew while reading (more than %d bytes)", name, size)
	}
	return nil
}

func metadataOf(fi fs.FileInfo) *pxar.Metadata {
	m := fi.Mode()
	mode := pxar.ModeIFREG | uint64(m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	st := pxar.Stat{Mode: mode}
	if mt := fi.ModTime(); !mt.IsZero() {
		st.Mtime = pxar.Timestamp{Secs: mt.Unix(), Nanos: uint32(mt.Nanosecond())}
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.UID, st.GID = sys.Uid, sys.Gid
	}
	return &pxar.Metadata{Stat: st}
}

// SnapshotFile is one file of a snapshot archive.
type SnapshotFile struct {
	Name     string
	Size     int64
	Mode     uint32 // unix mode with file type bits
	UID, GID uint32
	Mtime    time.Time
}

// SnapshotArchiveReader reads the files of a snapshot archive in order:
// Next moves to the next file, Read reads its content.
type SnapshotArchiveReader struct {
	r        TapeReader
	Header   ContentHeader
	Store    string
	Snapshot string
	pos      uint64 // offset in the pxar stream
	remain   int64  // unread content of the current file
	table    pxar.GoodbyeTable
	names    map[string]bool
	started  bool
	done     bool
	err      error
	hdr      [pxar.HeaderSize]byte
}

// NewSnapshotArchiveReader reads the archive's headers.
func NewSnapshotArchiveReader(r TapeReader) (*SnapshotArchiveReader, error) {
	h, js, err := ReadContentHeader(r)
	if err != nil {
		return nil, err
	}
	return OpenSnapshotArchive(r, h, js)
}

// OpenSnapshotArchive continues after a content header the caller read.
func OpenSnapshotArchive(r TapeReader, h ContentHeader, js []byte) (*SnapshotArchiveReader, error) {
	if err := expect(h, MagicSnapshotArchive, MagicSnapshotNS); err != nil {
		return nil, err
	}
	var sh snapshotArchiveHeader
	if err := parseJSON(h, js, &sh); err != nil {
		return nil, err
	}
	if sh.Snapshot == "" {
		return nil, fmt.Errorf("%w: snapshot archive without snapshot name", ErrBadHeader)
	}
	return &SnapshotArchiveReader{r: r, Header: h, Store: sh.Store, Snapshot: sh.Snapshot,
		names: map[string]bool{}}, nil
}

func (s *SnapshotArchiveReader) corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: snapshot archive %s: offset %d: %s", ErrCorrupt, s.Snapshot, s.pos, fmt.Sprintf(format, args...))
}

// fail maps a read error: the end of the stream inside the archive is
// ErrIncomplete when the writer said so, corruption otherwise.
func (s *SnapshotArchiveReader) fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if s.r.Ended() && s.r.Incomplete() {
			err = fmt.Errorf("snapshot archive %s: %w", s.Snapshot, ErrIncomplete)
		} else {
			err = s.corrupt("archive ends early")
		}
	}
	s.err = err
	return err
}

func (s *SnapshotArchiveReader) readFull(b []byte) error {
	n, err := io.ReadFull(s.r, b)
	s.pos += uint64(n)
	if err != nil {
		return s.fail(err)
	}
	return nil
}

// item reads an item header and returns its type and content size.
func (s *SnapshotArchiveReader) item() (uint64, uint64, error) {
	if err := s.readFull(s.hdr[:]); err != nil {
		return 0, 0, err
	}
	htype := binary.LittleEndian.Uint64(s.hdr[:])
	size := binary.LittleEndian.Uint64(s.hdr[8:])
	if size < pxar.HeaderSize {
		s.pos -= pxar.HeaderSize
		s.err = s.corrupt("item %#x of size %d", htype, size)
		return 0, 0, s.err
	}
	return htype, size - pxar.HeaderSize, nil
}

func (s *SnapshotArchiveReader) stat(wantDir bool) (pxar.Stat, error) {
	at := s.pos
	htype, size, err := s.item()
	if err != nil {
		return pxar.Stat{}, err
	}
	if htype == pxar.TypeFormatVersion {
		s.err = fmt.Errorf("%w: snapshot archive %s: pxar v2", ErrUnsupported, s.Snapshot)
		return pxar.Stat{}, s.err
	}
	if !(htype == pxar.TypeEntry && size == pxar.EntrySize) && !(htype == pxar.TypeEntryV1 && size == pxar.EntryV1Size) {
		s.pos = at
		s.err = s.corrupt("want ENTRY, found item %#x of %d bytes", htype, size)
		return pxar.Stat{}, s.err
	}
	var b [pxar.EntrySize]byte
	if err := s.readFull(b[:size]); err != nil {
		return pxar.Stat{}, err
	}
	st, _ := pxar.DecodeEntry(htype, b[:size])
	if st.IsDir() != wantDir || (!wantDir && !st.IsRegular()) {
		s.err = s.corrupt("entry of mode %#o where a %s belongs", st.Mode, map[bool]string{true: "directory", false: "regular file"}[wantDir])
		return pxar.Stat{}, s.err
	}
	return st, nil
}
