package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/block"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// RebuildCatalog reads a whole tape and writes its media catalog anew
// (temp file + rename), recording every complete chunk and snapshot
// archive, and updates the inventory from the tape's labels. Files
// without an end marker (interrupted writes) and archives marked
// incomplete are skipped, as PBS does; corrupt archives are errors.
func RebuildCatalog(ctx context.Context, d *drive.Drive, text string, log *slog.Logger) (*catalog.Catalog, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	inv, err := LoadInventory(d.Dir())
	if err != nil {
		return nil, err
	}
	if err := d.Load(text); err != nil {
		return nil, err
	}
	l, set, err := ReadLabels(d)
	if err != nil {
		return nil, fmt.Errorf("tape %s: %w", text, err)
	}
	if l.LabelText != text {
		return nil, fmt.Errorf("tape %s: %w: its media label says %q", text, ErrMismatch, l.LabelText)
	}
	c, err := catalog.NewTemp(CatalogDir(d), l.UUID, set)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	n, err := d.FileCount()
	if err != nil {
		return nil, err
	}
	for file := 2; file < n && set != nil; file++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := scanFile(d, c, text, file, log); err != nil {
			return nil, err
		}
	}
	if err := c.Publish(); err != nil {
		return nil, err
	}
	old, _ := inv.LookupLabel(text)
	inv.Put(Media{Label: l, Set: set, Full: old.Full && old.Label.UUID == l.UUID})
	return c, inv.Save()
}

// skippable reports read errors that make a file unusable without
// making the tape corrupt: an interrupted write.
func skippable(err error) bool {
	return errors.Is(err, block.ErrTruncated) || errors.Is(err, block.ErrEmptyFile) || errors.Is(err, format.ErrIncomplete)
}

func scanFile(d *drive.Drive, c *catalog.Catalog, label string, file int, log *slog.Logger) error {
	if err := d.MoveToFile(file); err != nil {
		return err
	}
	r, err := d.ReadFile()
	if err != nil {
		if skippable(err) {
			log.Warn("skipping unfinished tape file", "tape", label, "file", file, "error", err)
			return nil
		}
		return err
	}
	defer r.Close()
	err = scanContent(c, r, file)
	if err != nil && !skippable(err) {
		// a file cut short by an interrupted write may hold anything
		if _, serr := r.SkipToEnd(); errors.Is(serr, block.ErrTruncated) {
			err = serr
		}
	}
	if skippable(err) {
		log.Warn("skipping unfinished tape file", "tape", label, "file", file, "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("tape %s file %d: %w", label, file, err)
	}
	return nil
}

// scanContent reads one tape file and registers it when it is a
// complete chunk or snapshot archive.
func scanContent(c *catalog.Catalog, r *drive.FileReader, file int) error {
	h, js, err := format.ReadContentHeader(r)
	if err != nil {
		return err
	}
	switch h.ContentMagic {
	case format.MagicChunkArchive:
		a, err := format.OpenChunkArchive(r, h, js)
		if err != nil {
			return err
		}
		digests, err := scanChunks(a)
		if err != nil {
			return err
		}
		return c.RegisterChunkArchive(h.UUID, uint64(file), a.Store, digests)
	case format.MagicSnapshotArchive, format.MagicSnapshotNS:
		s, err := format.OpenSnapshotArchive(r, h, js)
		for err == nil {
			_, err = s.Next()
		}
		if err != io.EOF {
			return err
		}
		return c.RegisterSnapshot(h.UUID, uint64(file), s.Store, s.Snapshot)
	case format.MagicCatalogArchive, format.MagicCatalogArchive0:
		_, err := r.SkipToEnd()
		return err
	}
	return fmt.Errorf("%w: %s", format.ErrWrongKind, format.ContentName(h.ContentMagic))
}

func scanChunks(a *format.ChunkArchiveReader) ([]chunk.Digest, error) {
	var out []chunk.Digest
	var buf []byte
	for {
		d, blob, err := a.Next(buf)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		buf = blob[:0]
		out = append(out, d)
	}
}
