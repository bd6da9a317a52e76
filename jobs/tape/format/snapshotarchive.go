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

func encodeSnapshot(w io.Writer, fsys fs.FS, files []string) error {
	p := &pxarWriter{w: w}
	if err := p.begin(pxarStat{Mode: unixIFDIR | 0o664}); err != nil {
		return err
	}
	buf := make([]byte, block.PayloadSize)
	for _, name := range files {
		if err := encodeFile(p, fsys, name, buf); err != nil {
			return err
		}
	}
	return p.finish()
}

func encodeFile(p *pxarWriter, fsys fs.FS, name string, buf []byte) error {
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
	return p.file(name, statOf(fi), fi.Size(), f, buf)
}

func statOf(fi fs.FileInfo) pxarStat {
	m := fi.Mode()
	mode := uint64(unixIFREG | m.Perm())
	if m&fs.ModeSetuid != 0 {
		mode |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		mode |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		mode |= 0o1000
	}
	st := pxarStat{Mode: mode, Mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.UID, st.GID = sys.Uid, sys.Gid
	}
	return st
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
	items    []goodbyeItem
	names    map[string]bool
	started  bool
	done     bool
	err      error
	hdr      [pxarHeaderSize]byte
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
	if size < pxarHeaderSize {
		s.pos -= pxarHeaderSize
		s.err = s.corrupt("item %#x of size %d", htype, size)
		return 0, 0, s.err
	}
	return htype, size - pxarHeaderSize, nil
}

func (s *SnapshotArchiveReader) stat(wantDir bool) (pxarStat, error) {
	at := s.pos
	htype, size, err := s.item()
	if err != nil {
		return pxarStat{}, err
	}
	if htype == pxarFormatVersion {
		s.err = fmt.Errorf("%w: snapshot archive %s: pxar v2", ErrUnsupported, s.Snapshot)
		return pxarStat{}, s.err
	}
	if !(htype == pxarEntry && size == pxarStatSize) && !(htype == pxarEntryV1 && size == pxarStatV1Size) {
		s.pos = at
		s.err = s.corrupt("want ENTRY, found item %#x of %d bytes", htype, size)
		return pxarStat{}, s.err
	}
	var b [pxarStatSize]byte
	if err := s.readFull(b[:size]); err != nil {
		return pxarStat{}, err
	}
	st := parseStat(htype, b[:])
	if isDir := st.Mode&unixIFMT == unixIFDIR; isDir != wantDir || (!wantDir && st.Mode&unixIFMT != unixIFREG) {
		s.err = s.corrupt("entry of mode %#o where a %s belongs", st.Mode, map[bool]string{true: "directory", false: "regular file"}[wantDir])
		return pxarStat{}, s.err
	}
	return st, nil
}
