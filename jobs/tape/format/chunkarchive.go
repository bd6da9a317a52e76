package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/block"
)

// MaxChunkArchiveSize bounds a chunk archive (PBS MAX_CHUNK_ARCHIVE_SIZE).
const MaxChunkArchiveSize = 4 << 30

// ChunkEntryHeaderSize is magic[8] | digest[32] | size u64.
const ChunkEntryHeaderSize = 48

type chunkArchiveHeader struct {
	Store string `json:"store"`
}

// ChunkArchiveWriter writes one chunk archive file.
type ChunkArchiveWriter struct {
	w       TapeWriter
	uuid    UUID
	maxSize int64
	digests []chunk.Digest
	closed  bool
	leom    bool
	entry   [ChunkEntryHeaderSize]byte
}

// NewChunkArchiveWriter writes the archive's headers for store. maxSize
// bounds the archive (0: MaxChunkArchiveSize).
func NewChunkArchiveWriter(w TapeWriter, store string, maxSize int64) (*ChunkArchiveWriter, error) {
	if maxSize <= 0 {
		maxSize = MaxChunkArchiveSize
	}
	h, err := writeHeader(w, MagicChunkArchive, chunkArchiveHeader{Store: store})
	a := &ChunkArchiveWriter{w: w, uuid: h.UUID, maxSize: maxSize}
	if errors.Is(err, block.ErrLEOM) {
		return a, a.close() // nothing fits; the archive is closed and empty
	}
	if err != nil {
		return nil, fmt.Errorf("write chunk archive header: %w", err)
	}
	return a, nil
}

// UUID returns the archive's content UUID.
func (a *ChunkArchiveWriter) UUID() UUID { return a.uuid }

// Digests returns the chunks written completely so far.
func (a *ChunkArchiveWriter) Digests() []chunk.Digest { return a.digests }

// Closed reports whether the archive was finished.
func (a *ChunkArchiveWriter) Closed() bool { return a.closed }

// LEOM reports whether the tape reached its logical end.
func (a *ChunkArchiveWriter) LEOM() bool { return a.leom || a.w.LEOM() }

// BytesWritten returns the tape bytes used by the archive so far.
func (a *ChunkArchiveWriter) BytesWritten() int64 { return a.w.BytesWritten() }

// WriteChunk appends the chunk's raw DataBlob. It returns false, without
// error, when the chunk is not in the archive: the archive is then closed
// because the tape reached LEOM (see LEOM) or the next entry would pass
// the size limit; the caller continues in a new archive (on the next
// tape after LEOM). An archive closed at LEOM may end with part of this
// chunk's entry, which readers ignore, as PBS's do.
func (a *ChunkArchiveWriter) WriteChunk(d chunk.Digest, blob []byte) (bool, error) {
	if a.closed {
		return false, nil
	}
	need := int64(ChunkEntryHeaderSize + len(blob) + block.Size)
	if len(a.digests) > 0 && a.w.BytesWritten()+need > a.maxSize {
		return false, a.close()
	}
	copy(a.entry[:8], MagicChunkEntry[:])
	copy(a.entry[8:40], d[:])
	binary.LittleEndian.PutUint64(a.entry[40:], uint64(len(blob)))
	_, err := a.w.Write(a.entry[:])
	if err == nil {
		_, err = a.w.Write(blob)
	}
	if errors.Is(err, block.ErrLEOM) {
		a.leom = true
		return false, a.close()
	}
	if err != nil {
		return false, fmt.Errorf("chunk archive: write chunk %s: %w", d, err)
	}
	a.digests = append(a.digests, d)
	if a.w.LEOM() {
		a.leom = true
		return true, a.close()
	}
	return true, nil
}

// Finish ends the archive (no-op when WriteChunk already closed it).
func (a *ChunkArchiveWriter) Finish() error { return a.close() }

func (a *ChunkArchiveWriter) close() error {
	if a.closed {
		return nil
	}
	a.closed = true
	if err := a.w.Finish(false); err != nil {
		return fmt.Errorf("chunk archive: finish: %w", err)
	}
	return nil
}

// ChunkArchiveReader reads the entries of a chunk archive.
type ChunkArchiveReader struct {
	r      TapeReader
	Header ContentHeader
	Store  string
	off    int64 // stream offset of the next entry
	n      int   // entries read
	entry  [ChunkEntryHeaderSize]byte
}

// NewChunkArchiveReader reads the archive's headers.
func NewChunkArchiveReader(r TapeReader) (*ChunkArchiveReader, error) {
	h, js, err := ReadContentHeader(r)
	if err != nil {
		return nil, err
	}
	return OpenChunkArchive(r, h, js)
}

// OpenChunkArchive continues after a content header the caller read.
func OpenChunkArchive(r TapeReader, h ContentHeader, js []byte) (*ChunkArchiveReader, error) {
	if h.ContentMagic == MagicChunkArchive10 {
		return nil, fmt.Errorf("%w: chunk archive v1.0", ErrUnsupported)
	}
	if err := expect(h, MagicChunkArchive); err != nil {
		return nil, err
	}
	var ah chunkArchiveHeader
	if err := parseJSON(h, js, &ah); err != nil {
		return nil, err
	}
	return &ChunkArchiveReader{r: r, Header: h, Store: ah.Store, off: int64(ContentHeaderSize + len(js))}, nil
}

// Next returns the next chunk's digest and raw DataBlob (in buf's
// storage), with its CRC checked. It returns io.EOF at the end of the
// archive; a last entry cut short by the end of the tape also ends it.
func (a *ChunkArchiveReader) Next(buf []byte) (chunk.Digest, []byte, error) {
	var d chunk.Digest
	if _, err := io.ReadFull(a.r, a.entry[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return d, nil, io.EOF
		}
		return d, nil, err
	}
	where := fmt.Sprintf("chunk archive entry %d at offset %d", a.n, a.off)
	if [8]byte(a.entry[:8]) != MagicChunkEntry {
		return d, nil, fmt.Errorf("%w: %s: bad entry magic % x", ErrCorrupt, where, a.entry[:8])
	}
	d = chunk.Digest(a.entry[8:40])
	size := binary.LittleEndian.Uint64(a.entry[40:])
	if size < chunk.BlobHeaderSize || size > chunk.MaxBlobSize {
		return d, nil, fmt.Errorf("%w: %s: chunk %s size %d out of range", ErrCorrupt, where, d, size)
	}
	buf, err := readGrowing(a.r, buf, int(size))
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return d, nil, io.EOF
		}
		return d, nil, err
	}
	if _, err := chunk.CheckCRC(buf); err != nil {
		return d, nil, fmt.Errorf("%w: %s: chunk %s: %w", ErrCorrupt, where, d, err)
	}
	a.n++
	a.off += ChunkEntryHeaderSize + int64(size)
	return d, buf, nil
}

// readGrowing reads size bytes into buf's storage, growing it with the
// bytes that arrive (from 1 MiB, doubling) rather than with the size an
// entry claims: a tape stream's length is unknown until it ends.
func readGrowing(r io.Reader, buf []byte, size int) ([]byte, error) {
	buf = buf[:0]
	for len(buf) < size {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(size-len(buf), max(len(buf), 1<<20)))
		}
		n, err := io.ReadFull(r, buf[len(buf):min(cap(buf), size)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
