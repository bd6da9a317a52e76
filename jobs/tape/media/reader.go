package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// openFile positions the loaded tape at file n and reads its content
// header.
func openFile(d *drive.Drive, label string, n int) (*drive.FileReader, format.ContentHeader, []byte, error) {
	if err := d.MoveToFile(n); err != nil {
		return nil, format.ContentHeader{}, nil, err
	}
	r, err := d.ReadFile()
	if err != nil {
		return nil, format.ContentHeader{}, nil, err
	}
	h, js, err := format.ReadContentHeader(r)
	if err != nil {
		r.Close()
		return nil, h, nil, fmt.Errorf("tape %s file %d: %w", label, n, err)
	}
	return r, h, js, nil
}

// checkFileUUID checks that a catalogued file is on the tape as
// catalogued (same content UUID).
func checkFileUUID(d *drive.Drive, label string, f catalog.File) error {
	r, h, _, err := openFile(d, label, int(f.Number))
	if err != nil {
		return fmt.Errorf("%w: catalog lists %s %d: %w", ErrMismatch, f.Kind, f.Number, err)
	}
	r.Close()
	if h.UUID != f.UUID {
		return fmt.Errorf("tape %s file %d: %w: catalog lists %s %s, the tape holds %s %s",
			label, f.Number, ErrMismatch, f.Kind, f.UUID, format.ContentName(h.ContentMagic), h.UUID)
	}
	return nil
}

// completeCatalogArchive reports whether file n is a complete catalog
// archive.
func completeCatalogArchive(d *drive.Drive, n int) bool {
	r, h, _, err := openFile(d, "", n)
	if err != nil {
		return false
	}
	defer r.Close()
	if h.ContentMagic != format.MagicCatalogArchive && h.ContentMagic != format.MagicCatalogArchive0 {
		return false
	}
	_, err = r.SkipToEnd()
	return err == nil && !r.Incomplete()
}

// SetReader reads the archives of one media set, guided by its catalog.
type SetReader struct {
	d       *drive.Drive
	set     format.UUID
	members []Media
	cats    catalog.Set
	loaded  format.UUID
}

// OpenSet opens a media set of the drive's inventory for reading.
func OpenSet(d *drive.Drive, set format.UUID) (*SetReader, error) {
	members, cats, err := ReadSet(d.Dir(), set)
	if err != nil {
		return nil, err
	}
	return &SetReader{d: d, set: set, members: members, cats: *cats}, nil
}

// ReadSet loads a media set's tapes, in sequence order, and their
// catalogs (read-only) from a drive directory, without the drive's lock:
// catalogs are committed by appending whole records, and a torn tail is
// ignored. The caller closes the catalogs.
func ReadSet(dir string, set format.UUID) ([]Media, *catalog.Set, error) {
	inv, err := LoadInventory(dir)
	if err != nil {
		return nil, nil, err
	}
	members, err := inv.SetMembers(set)
	if err != nil {
		return nil, nil, err
	}
	cats := &catalog.Set{}
	for _, m := range members {
		c, err := catalog.Open(filepath.Join(dir, catalogSubdir), m.Label.UUID, m.Set, false)
		if err != nil {
			for _, c := range cats.Catalogs() {
				c.Close()
			}
			return nil, nil, fmt.Errorf("media set %s tape %s: %w (rebuild the tape's catalog)", set, m.Label.LabelText, err)
		}
		cats.Add(c)
	}
	return members, cats, nil
}

// Catalog returns the set's catalog.
func (r *SetReader) Catalog() *catalog.Set { return &r.cats }

// Members returns the set's tapes in sequence order.
func (r *SetReader) Members() []Media { return r.members }

func (r *SetReader) member(u format.UUID) (Media, *catalog.Catalog, error) {
	for i, m := range r.members {
		if m.Label.UUID == u {
			return m, r.cats.Catalogs()[i], nil
		}
	}
	return Media{}, nil, fmt.Errorf("media %s: %w in media set %s", u, ErrUnknown, r.set)
}

// open loads the tape (checking its labels once) and opens a catalogued
// file, checking that it holds what the catalog says.
func (r *SetReader) open(media format.UUID, file uint64, kind catalog.Kind) (*drive.FileReader, format.ContentHeader, []byte, error) {
	m, c, err := r.member(media)
	if err != nil {
		return nil, format.ContentHeader{}, nil, err
	}
	label := m.Label.LabelText
	if r.loaded != media {
		p := &Pool{d: r.d}
		if _, err := p.loadChecked(m); err != nil {
			return nil, format.ContentHeader{}, nil, err
		}
		r.loaded = media
	}
	f, ok := c.File(file)
	if !ok || f.Kind != kind {
		return nil, format.ContentHeader{}, nil, fmt.Errorf("tape %s file %d: %w: not a catalogued %s", label, file, ErrMismatch, kind)
	}
	fr, h, js, err := openFile(r.d, label, int(file))
	if err != nil {
		return nil, h, nil, err
	}
	if h.UUID != f.UUID {
		fr.Close()
		return nil, h, nil, fmt.Errorf("tape %s file %d: %w: catalog lists %s %s, the tape holds %s %s",
			label, file, ErrMismatch, kind, f.UUID, format.ContentName(h.ContentMagic), h.UUID)
	}
	return fr, h, js, nil
}

// ReadChunkArchive calls fn for every chunk of a chunk archive (blob CRC
// checked; the blob's storage is reused after fn returns). The archive
// must hold every chunk the catalog lists for it.
func (r *SetReader) ReadChunkArchive(ctx context.Context, media format.UUID, file uint64, fn func(chunk.Digest, []byte) error) error {
	fr, h, js, err := r.open(media, file, catalog.KindChunkArchive)
	if err != nil {
		return err
	}
	defer fr.Close()
	a, err := format.OpenChunkArchive(fr, h, js)
	if err != nil {
		return fmt.Errorf("tape %s file %d: %w", fr.Label(), file, err)
	}
	_, c, _ := r.member(media)
	listed, _ := c.File(file)
	var buf []byte
	n := 0
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, blob, err := a.Next(buf)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("tape %s file %d: %w", fr.Label(), file, err)
		}
		buf = blob[:0]
		if at, ok := c.LookupChunk(a.Store, d); ok && at == file {
			n++
		}
		if err := fn(d, blob); err != nil {
			return err
		}
	}
	if n < listed.Chunks {
		return fmt.Errorf("tape %s file %d: %w: catalog lists %d chunks, the archive holds %d of them",
			fr.Label(), file, ErrMismatch, listed.Chunks, n)
	}
	return nil
}

// ReadSnapshotArchive hands a catalogued snapshot archive to fn.
func (r *SetReader) ReadSnapshotArchive(media format.UUID, file uint64, fn func(*format.SnapshotArchiveReader) error) error {
	fr, h, js, err := r.open(media, file, catalog.KindSnapshot)
	if err != nil {
		return err
	}
	defer fr.Close()
	s, err := format.OpenSnapshotArchive(fr, h, js)
	if err != nil {
		return fmt.Errorf("tape %s file %d: %w", fr.Label(), file, err)
	}
	return fn(s)
}

// Close releases the catalogs.
func (r *SetReader) Close() error {
	for _, c := range r.cats.Catalogs() {
		c.Close()
	}
	return nil
}
