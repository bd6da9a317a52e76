package format

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// TapeWriter is the byte stream of one tape file being written; a
// drive.FileWriter (block.Writer) is one. Write returns block.ErrLEOM
// once the tape reached its logical end.
type TapeWriter interface {
	io.Writer
	LEOM() bool
	BytesWritten() int64
	Finish(incomplete bool) error
}

// TapeReader is the byte stream of one tape file being read; a
// drive.FileReader (block.Reader) is one.
type TapeReader interface {
	io.Reader
	Ended() bool      // the end-of-stream block was read
	Incomplete() bool // the writer marked the stream incomplete
	SkipToEnd() (int64, error)
}

// ContentHeaderSize is the size of a MediaContentHeader.
const ContentHeaderSize = 48

// Magics (pbs-tape lib.rs, src/tape/file_formats/mod.rs).
var (
	MagicContentHeader   = [8]byte{99, 238, 20, 159, 205, 242, 155, 12}
	MagicMediaLabel      = [8]byte{42, 5, 191, 60, 176, 48, 170, 57}
	MagicMediaSetLabel   = [8]byte{8, 96, 99, 249, 47, 151, 83, 216}
	MagicChunkArchive10  = [8]byte{62, 173, 167, 95, 49, 76, 6, 110}
	MagicChunkArchive    = [8]byte{109, 49, 99, 109, 215, 2, 131, 191} // v1.1
	MagicChunkEntry      = [8]byte{72, 87, 109, 242, 222, 66, 143, 220}
	MagicSnapshotArchive = [8]byte{218, 22, 21, 208, 17, 226, 154, 98} // v1.1
	MagicSnapshotNS      = [8]byte{98, 16, 54, 155, 186, 16, 51, 29}   // v1.2 (namespaces)
	MagicCatalogArchive0 = [8]byte{183, 207, 199, 37, 158, 153, 30, 115}
	MagicCatalogArchive  = [8]byte{179, 236, 113, 240, 173, 236, 2, 96} // v1.1
)

// Sentinel errors, matched with errors.Is.
var (
	ErrNotContent  = errors.New("tape file does not start with a media content header")
	ErrWrongKind   = errors.New("unexpected tape file content")
	ErrBadHeader   = errors.New("bad content header")
	ErrCorrupt     = errors.New("corrupt tape archive")
	ErrIncomplete  = errors.New("tape archive is incomplete (writer reached the end of the tape)")
	ErrUnsupported = errors.New("unsupported tape archive version")
)

// ContentName names a content magic for messages.
func ContentName(m [8]byte) string {
	switch m {
	case MagicMediaLabel:
		return "media label"
	case MagicMediaSetLabel:
		return "media set label"
	case MagicChunkArchive, MagicChunkArchive10:
		return "chunk archive"
	case MagicSnapshotArchive, MagicSnapshotNS:
		return "snapshot archive"
	case MagicCatalogArchive, MagicCatalogArchive0:
		return "catalog archive"
	}
	return fmt.Sprintf("unknown content % x", m[:])
}

// ContentHeader is PBS's MediaContentHeader.
type ContentHeader struct {
	ContentMagic [8]byte
	UUID         UUID  // identifies this file's content
	Ctime        int64 // unix seconds
	Size         uint32
	PartNumber   uint8
}

// NewContentHeader returns a header with a fresh UUID and the current time.
func NewContentHeader(magic [8]byte, size int) ContentHeader {
	return ContentHeader{ContentMagic: magic, UUID: NewUUID(), Ctime: time.Now().Unix(), Size: uint32(size)}
}

// AppendBinary appends the 48-byte encoding.
func (h ContentHeader) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, MagicContentHeader[:]...)
	b = append(b, h.ContentMagic[:]...)
	b = append(b, h.UUID[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(h.Ctime))
	b = binary.LittleEndian.AppendUint32(b, h.Size)
	return append(b, h.PartNumber, 0, 0, 0), nil
}

// ParseContentHeader decodes 48 bytes.
func ParseContentHeader(b []byte) (ContentHeader, error) {
	var h ContentHeader
	if len(b) < ContentHeaderSize {
		return h, fmt.Errorf("%w: %d bytes", ErrNotContent, len(b))
	}
	if [8]byte(b[:8]) != MagicContentHeader {
		return h, fmt.Errorf("%w (magic % x)", ErrNotContent, b[:8])
	}
	h.ContentMagic = [8]byte(b[8:16])
	h.UUID = UUID(b[16:32])
	h.Ctime = int64(binary.LittleEndian.Uint64(b[32:40]))
	h.Size = binary.LittleEndian.Uint32(b[40:44])
	h.PartNumber = b[44]
	return h, nil
}

// maxJSONHeader bounds the JSON header of any content (PBS: 64 KiB for
// labels; archive headers are smaller still).
const maxJSONHeader = 64 << 10

// ReadContentHeader reads the content header and its JSON header.
func ReadContentHeader(r io.Reader) (ContentHeader, []byte, error) {
	var b [ContentHeaderSize]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return ContentHeader{}, nil, fmt.Errorf("read content header: %w", noEOF(err))
	}
	h, err := ParseContentHeader(b[:])
	if err != nil {
		return h, nil, err
	}
	if h.Size == 0 || h.Size > maxJSONHeader {
		return h, nil, fmt.Errorf("%w: %s JSON header of %d bytes", ErrBadHeader, ContentName(h.ContentMagic), h.Size)
	}
	js := make([]byte, h.Size)
	if _, err := io.ReadFull(r, js); err != nil {
		return h, nil, fmt.Errorf("read %s header: %w", ContentName(h.ContentMagic), noEOF(err))
	}
	return h, js, nil
}

// noEOF turns a bare EOF inside a structure into ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// writeHeader writes a content header with v as its pretty JSON header.
func writeHeader(w io.Writer, magic [8]byte, v any) (ContentHeader, error) {
	js, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return ContentHeader{}, err
	}
	h := NewContentHeader(magic, len(js))
	b, _ := h.AppendBinary(make([]byte, 0, ContentHeaderSize+len(js)))
	_, err = w.Write(append(b, js...))
	return h, err
}

func parseJSON(h ContentHeader, js []byte, v any) error {
	if err := json.Unmarshal(js, v); err != nil {
		return fmt.Errorf("%w: %s header: %w", ErrBadHeader, ContentName(h.ContentMagic), err)
	}
	return nil
}

func expect(h ContentHeader, magics ...[8]byte) error {
	for _, m := range magics {
		if h.ContentMagic == m {
			return nil
		}
	}
	return fmt.Errorf("%w: found %s, want %s", ErrWrongKind, ContentName(h.ContentMagic), ContentName(magics[0]))
}
