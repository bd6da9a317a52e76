package catalog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"os"
	"path/filepath"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// NewTemp starts a new catalog for a tape in <dir>/<media>.tmp holding its
// label records; nothing replaces the tape's catalog before Publish.
func NewTemp(dir string, media format.UUID, set *format.MediaSetLabel) (*Catalog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := newCatalog(media)
	c.final = Path(dir, media)
	c.path = filepath.Join(dir, media.String()+".tmp")
	f, err := os.OpenFile(c.path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c.f = f
	c.pending = append(c.pending, Magic[:]...)
	if err := c.label(0, media, 0); err != nil {
		f.Close()
		return nil, err
	}
	c.pending = appendLabel(c.pending, 0, media, 0)
	if set != nil {
		if err := c.label(1, set.UUID, set.SeqNr); err != nil {
			f.Close()
			return nil, err
		}
		c.pending = appendLabel(c.pending, 1, set.UUID, set.SeqNr)
	}
	return c, nil
}

// Create replaces the tape's catalog with a new one holding only its
// labels (temp file + rename) and returns it open for appending.
func Create(dir string, media format.UUID, set *format.MediaSetLabel) (*Catalog, error) {
	c, err := NewTemp(dir, media, set)
	if err != nil {
		return nil, err
	}
	if err := c.Publish(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Publish commits a catalog from NewTemp and renames it into place.
func (c *Catalog) Publish() error {
	if err := c.Commit(); err != nil {
		return err
	}
	if c.path == c.final {
		return nil
	}
	if err := os.Rename(c.path, c.final); err != nil {
		return fmt.Errorf("catalog: publish: %w", err)
	}
	c.path = c.final
	return syncDir(filepath.Dir(c.final))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Commit writes the pending records and syncs them to disk.
func (c *Catalog) Commit() error {
	if len(c.pending) == 0 {
		return nil
	}
	if c.f == nil {
		return ErrReadOnly
	}
	if _, err := c.f.WriteAt(c.pending, c.size); err != nil {
		return fmt.Errorf("catalog %s: commit: %w", c.path, err)
	}
	if err := c.f.Sync(); err != nil {
		return fmt.Errorf("catalog %s: commit: %w", c.path, err)
	}
	c.size += int64(len(c.pending))
	c.pending = c.pending[:0]
	return nil
}

// Size returns the committed size of the catalog file.
func (c *Catalog) Size() int64 { return c.size }

// FilePath returns the catalog's file.
func (c *Catalog) FilePath() string { return c.path }

// Close closes the catalog file; pending records are dropped.
func (c *Catalog) Close() error {
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// Open loads the tape's catalog. When set is given the catalog must
// belong to that media set. With write the catalog is opened for
// appending, and a torn tail (from a crash during a commit) is cut off
// (Torn says how much; a reader ignores one, a commit in progress).
func Open(dir string, media format.UUID, set *format.MediaSetLabel, write bool) (*Catalog, error) {
	path := Path(dir, media)
	flag := os.O_RDONLY
	if write {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("catalog of media %s: %w", media, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	c := newCatalog(media)
	c.path, c.final = path, path
	good, total, err := c.load(bufio.NewReaderSize(f, 1<<20))
	if err == nil {
		err = c.checkSet(set)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	c.size, c.torn = good, total-good
	if good < total {
		if write {
			if err := f.Truncate(good); err != nil {
				f.Close()
				return nil, fmt.Errorf("catalog %s: cut torn tail: %w", path, err)
			}
		}
	}
	if write {
		c.f = f
	} else {
		f.Close()
	}
	return c, nil
}

// Parse reads a catalog from r (e.g. a catalog archive) into memory.
func Parse(r io.Reader, media format.UUID) (*Catalog, error) {
	c := newCatalog(media)
	good, total, err := c.load(bufio.NewReader(r))
	if err != nil {
		return nil, err
	}
	if good < total {
		return nil, fmt.Errorf("%w: %d bytes of unfinished records at offset %d", ErrCorrupt, total-good, good)
	}
	c.size = good
	return c, nil
}

func (c *Catalog) checkSet(set *format.MediaSetLabel) error {
	if set == nil {
		return nil
	}
	if !c.hasSet || c.set != set.UUID || c.seqNr != set.SeqNr {
		return fmt.Errorf("%w: catalog is for media set %s/%d, tape for %s/%d",
			ErrMismatch, c.set, c.seqNr, set.UUID, set.SeqNr)
	}
	return nil
}

// load parses records and returns the length of the consistent prefix
// (no chunk archive open, no record cut short) and the bytes read.
func (c *Catalog) load(r *bufio.Reader) (good, total int64, err error) {
	var magic [8]byte
	n, err := io.ReadFull(r, magic[:])
	total = int64(n)
	if err != nil {
		return 0, total, fmt.Errorf("%w: %d bytes, no magic", ErrCorrupt, n)
	}
	switch magic {
	case Magic:
	case Magic10:
		return 0, total, fmt.Errorf("%w: catalog format v1.0 is not supported", ErrCorrupt)
	default:
		return 0, total, fmt.Errorf("%w: wrong magic % x", ErrCorrupt, magic[:])
	}
	good = total
	var pendingChunks []chunk.Digest
	var rec [40]byte
	for {
		off := total
		typ, err := r.ReadByte()
		if err == io.EOF {
			c.open = nil // an archive without its end record is a torn tail
			return good, total, nil
		}
		if err != nil {
			return good, total, err
		}
		total++
		fixed := map[byte]int{'L': 32, 'A': 32, 'C': 32, 'E': 24, 'S': 32}[typ]
		if fixed == 0 {
			return good, total, fmt.Errorf("%w: offset %d: unknown record type %q", ErrCorrupt, off, typ)
		}
		n, err := io.ReadFull(r, rec[:fixed])
		total += int64(n)
		if err != nil {
			c.open = nil
			return good, total, nil // torn tail
		}
		file := binary.LittleEndian.Uint64(rec[:])
		uuid := format.UUID(rec[8:24])
		var aerr error
		switch typ {
		case 'L':
			aerr = c.label(file, uuid, binary.LittleEndian.Uint64(rec[24:]))
		case 'C':
			if c.open == nil {
				aerr = fmt.Errorf("%w: chunk record outside a chunk archive", ErrOrder)
			}
			pendingChunks = append(pendingChunks, chunk.Digest(rec[:32]))
		case 'E':
			aerr = c.endArchive(file, uuid, pendingChunks)
			pendingChunks = pendingChunks[:0]
		case 'A', 'S':
			var name []byte
			name, err = readName(r, typ, rec[:])
			total += int64(len(name))
			if err != nil {
				c.open = nil
				return good, total, nil // torn tail
			}
			if typ == 'A' {
				aerr = c.startArchive(file, uuid, string(name))
			} else {
				aerr = c.snapshotRecord(file, uuid, name, int(rec[24]))
			}
		}
		if aerr != nil {
			return good, total, fmt.Errorf("offset %d: %w", off, aerr)
		}
		if c.open == nil {
			good = total
		}
	}
}

// readName reads the variable part of an 'A' (store) or 'S' (store ':'
// snapshot) record.
func readName(r io.Reader, typ byte, rec []byte) ([]byte, error) {
	n := int(rec[24])
	if typ == 'S' {
		n += 1 + int(binary.LittleEndian.Uint16(rec[26:]))
	}
	name := make([]byte, n)
	m, err := io.ReadFull(r, name)
	return name[:m], err
}

func (c *Catalog) snapshotRecord(file uint64, uuid format.UUID, name []byte, storeLen int) error {
	if name[storeLen] != ':' {
		return fmt.Errorf("%w: snapshot record without ':' separator", ErrCorrupt)
	}
	return c.snapshot(file, uuid, string(name[:storeLen]), string(name[storeLen+1:]))
}

// Torn is the size of the torn tail Open found past the last whole
// record (0: none): cut off when opened for writing, ignored otherwise.
func (c *Catalog) Torn() int64 { return c.torn }
