package format

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
)

// Next moves to the next file. It returns io.EOF after the last file,
// once the goodbye table matched the files and the stream ended;
// ErrIncomplete when the writer gave up at the end of the tape.
func (s *SnapshotArchiveReader) Next() (SnapshotFile, error) {
	if s.err != nil {
		return SnapshotFile{}, s.err
	}
	if s.done {
		return SnapshotFile{}, io.EOF
	}
	if s.remain > 0 {
		if _, err := io.CopyN(io.Discard, s, s.remain); err != nil {
			return SnapshotFile{}, err
		}
	}
	if !s.started {
		if _, err := s.stat(true); err != nil {
			return SnapshotFile{}, err
		}
		s.started = true
	}
	start := s.pos
	htype, size, err := s.item()
	if err != nil {
		return SnapshotFile{}, err
	}
	switch htype {
	case pxar.TypeFilename:
		return s.file(start, size)
	case pxar.TypeGoodbye:
		return SnapshotFile{}, s.goodbye(start, size)
	}
	s.pos = start
	s.err = s.corrupt("unexpected item %#x", htype)
	return SnapshotFile{}, s.err
}

func (s *SnapshotArchiveReader) file(start, size uint64) (SnapshotFile, error) {
	if size < 2 || size > maxFilename+1 {
		s.err = s.corrupt("file name of %d bytes", size)
		return SnapshotFile{}, s.err
	}
	nb := make([]byte, size)
	if err := s.readFull(nb); err != nil {
		return SnapshotFile{}, err
	}
	name := string(nb[:size-1])
	if nb[size-1] != 0 || checkFilename(name) != nil || s.names[name] {
		s.err = s.corrupt("bad or repeated file name %q", nb)
		return SnapshotFile{}, s.err
	}
	s.names[name] = true
	st, err := s.stat(false)
	if err != nil {
		return SnapshotFile{}, err
	}
	htype, psize, err := s.item()
	if err != nil {
		return SnapshotFile{}, err
	}
	if htype != pxar.TypePayload {
		s.err = s.corrupt("file %q: want PAYLOAD, found item %#x", name, htype)
		return SnapshotFile{}, s.err
	}
	if psize > math.MaxInt64 {
		s.err = s.corrupt("file %q: payload of %d bytes", name, psize)
		return SnapshotFile{}, s.err
	}
	s.remain = int64(psize)
	s.table.Add(name, start, s.pos-start+psize)
	return SnapshotFile{Name: name, Size: int64(psize), Mode: uint32(st.Mode), UID: st.UID, GID: st.GID,
		Mtime: time.Unix(st.Mtime.Secs, int64(st.Mtime.Nanos))}, nil
}

func (s *SnapshotArchiveReader) goodbye(start, size uint64) error {
	want := uint64((s.table.Len() + 1) * pxar.GoodbyeItemSize)
	if size != want {
		s.pos = start
		s.err = s.corrupt("goodbye table of %d bytes for %d files", size, s.table.Len())
		return s.err
	}
	table := make([]byte, pxar.HeaderSize+size)
	copy(table, s.hdr[:])
	if err := s.readFull(table[pxar.HeaderSize:]); err != nil {
		return err
	}
	if !bytes.Equal(table, s.table.Encode(0, start)) {
		s.pos = start
		s.err = s.corrupt("goodbye table does not match the files")
		return s.err
	}
	var extra [1]byte
	if n, err := s.r.Read(extra[:]); n > 0 || err != io.EOF {
		if err != nil && err != io.EOF {
			s.err = err
		} else {
			s.err = s.corrupt("data after the archive")
		}
		return s.err
	}
	if s.r.Incomplete() {
		s.err = fmt.Errorf("snapshot archive %s: %w", s.Snapshot, ErrIncomplete)
		return s.err
	}
	s.done = true
	return io.EOF
}

// Read reads the current file's content; io.EOF at its end.
func (s *SnapshotArchiveReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.remain <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.remain {
		p = p[:s.remain]
	}
	n, err := s.r.Read(p)
	s.pos += uint64(n)
	s.remain -= int64(n)
	if err == io.EOF && s.remain > 0 {
		return n, s.fail(io.ErrUnexpectedEOF)
	}
	if err != nil && err != io.EOF {
		s.err = err
		return n, err
	}
	return n, nil
}
