package catalog

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"sort"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// Magic starts a v1.1 media catalog; v1.0 is not supported (as in PBS).
var (
	Magic   = [8]byte{76, 142, 232, 193, 32, 168, 137, 113}
	Magic10 = [8]byte{221, 29, 164, 1, 59, 69, 19, 40}
)

// Sentinel errors, matched with errors.Is.
var (
	ErrCorrupt  = errors.New("corrupt media catalog")
	ErrMismatch = errors.New("media catalog does not match the tape")
	ErrOrder    = errors.New("media catalog record out of order")
	ErrReadOnly = errors.New("media catalog opened read-only")
	ErrNotFound = errors.New("no media catalog")
)

// Kind tells what a tape file holds.
type Kind int

// File kinds.
const (
	KindLabel Kind = iota + 1
	KindChunkArchive
	KindSnapshot
)

func (k Kind) String() string {
	switch k {
	case KindLabel:
		return "label"
	case KindChunkArchive:
		return "chunk archive"
	case KindSnapshot:
		return "snapshot archive"
	}
	return "unknown"
}

// File is one catalogued tape file.
type File struct {
	Number   uint64
	Kind     Kind
	UUID     format.UUID // content UUID from the file's MediaContentHeader
	Store    string
	Snapshot string // KindSnapshot
	Chunks   int    // KindChunkArchive
}

// content is what one datastore has on this tape.
type content struct {
	chunks    map[chunk.Digest]uint64
	snapshots map[string]uint64
}

// Catalog is the media catalog of one tape.
type Catalog struct {
	path    string // the .log file, or the .tmp file until Publish
	final   string // the .log path
	media   format.UUID
	set     format.UUID
	seqNr   uint64
	hasSet  bool
	f       *os.File // nil: read-only
	size    int64    // committed bytes in the file
	torn    int64    // bytes past the last whole record when opened (Torn)
	pending []byte
	stores  map[string]*content
	files   map[uint64]*File
	last    int64 // last file number with a record, -1: none
	open    *File // chunk archive between 'A' and 'E'
}

// Path returns the catalog file of a tape: <dir>/<media uuid>.log.
func Path(dir string, media format.UUID) string {
	return filepath.Join(dir, media.String()+".log")
}

func newCatalog(media format.UUID) *Catalog {
	return &Catalog{media: media, stores: map[string]*content{}, files: map[uint64]*File{}, last: -1}
}

// Media returns the tape's UUID.
func (c *Catalog) Media() format.UUID { return c.media }

// MediaSet returns the media set UUID and sequence number from the
// catalog's label records (ok=false: the tape has no media set label).
func (c *Catalog) MediaSet() (format.UUID, uint64, bool) { return c.set, c.seqNr, c.hasSet }

// LastFile returns the highest catalogued file number.
func (c *Catalog) LastFile() (uint64, bool) { return uint64(c.last), c.last >= 0 }

// File returns the catalogued file n.
func (c *Catalog) File(n uint64) (File, bool) {
	f, ok := c.files[n]
	if !ok {
		return File{}, false
	}
	return *f, true
}

// Files returns the catalogued files in order.
func (c *Catalog) Files() []File {
	out := make([]File, 0, len(c.files))
	for _, f := range c.files {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// LookupChunk returns the file that holds a chunk of store.
func (c *Catalog) LookupChunk(store string, d chunk.Digest) (uint64, bool) {
	if s := c.stores[store]; s != nil {
		n, ok := s.chunks[d]
		return n, ok
	}
	return 0, false
}

// LookupSnapshot returns the file that holds a snapshot archive.
func (c *Catalog) LookupSnapshot(store, snapshot string) (uint64, bool) {
	if s := c.stores[store]; s != nil {
		n, ok := s.snapshots[snapshot]
		return n, ok
	}
	return 0, false
}

// Chunks returns the number of chunks on the tape for store.
func (c *Catalog) Chunks(store string) int {
	if s := c.stores[store]; s != nil {
		return len(s.chunks)
	}
	return 0
}

// Stores returns the datastores with content on the tape.
func (c *Catalog) Stores() []string {
	var out []string
	for s := range c.stores {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (c *Catalog) store(name string) *content {
	s := c.stores[name]
	if s == nil {
		s = &content{chunks: map[chunk.Digest]uint64{}, snapshots: map[string]uint64{}}
		c.stores[name] = s
	}
	return s
}

// Record encodings (little-endian, repr(C) layouts with padding).
func appendLabel(b []byte, file uint64, uuid format.UUID, seqNr uint64) []byte {
	b = append(b, 'L')
	b = binary.LittleEndian.AppendUint64(b, file)
	b = append(b, uuid[:]...)
	return binary.LittleEndian.AppendUint64(b, seqNr)
}

func appendArchiveStart(b []byte, file uint64, uuid format.UUID, store string) []byte {
	b = append(b, 'A')
	b = binary.LittleEndian.AppendUint64(b, file)
	b = append(b, uuid[:]...)
	b = append(b, byte(len(store)), 0, 0, 0, 0, 0, 0, 0)
	return append(b, store...)
}

func appendArchiveEnd(b []byte, file uint64, uuid format.UUID) []byte {
	b = append(b, 'E')
	b = binary.LittleEndian.AppendUint64(b, file)
	return append(b, uuid[:]...)
}

func appendSnapshot(b []byte, file uint64, uuid format.UUID, store, snapshot string) []byte {
	b = append(b, 'S')
	b = binary.LittleEndian.AppendUint64(b, file)
	b = append(b, uuid[:]...)
	b = append(b, byte(len(store)), 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(snapshot)))
	b = append(b, 0, 0, 0, 0)
	b = append(b, store...)
	b = append(b, ':')
	return append(b, snapshot...)
}
