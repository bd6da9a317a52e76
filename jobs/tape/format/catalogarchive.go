package format

import (
	"errors"
	"fmt"
	"io"

	"github.com/cairnfs/cairn/jobs/tape/block"
)

type catalogArchiveHeader struct {
	UUID         UUID   `json:"uuid"`           // the media the catalog describes
	MediaSetUUID UUID   `json:"media_set_uuid"` // its media set
	SeqNr        uint64 `json:"seq_nr"`         // its sequence number in the set
}

// CatalogInfo says which tape a catalog archive describes.
type CatalogInfo struct {
	Media    UUID
	MediaSet UUID
	SeqNr    uint64
}

// WriteCatalogArchive copies a media catalog (the content of its file,
// size bytes) to tape. done=false: the tape reached LEOM first and the
// file was finished marked incomplete.
func WriteCatalogArchive(w TapeWriter, info CatalogInfo, catalog io.Reader, size int64) (UUID, bool, error) {
	h, err := writeHeader(w, MagicCatalogArchive, catalogArchiveHeader{info.Media, info.MediaSet, info.SeqNr})
	if err == nil && w.LEOM() {
		err = block.ErrLEOM
	}
	if err == nil {
		var n int64
		n, err = io.CopyBuffer(w, io.LimitReader(catalog, size), make([]byte, block.PayloadSize))
		if err == nil && n != size {
			err = fmt.Errorf("catalog %s shrank while reading (%d of %d bytes)", info.Media, n, size)
		}
	}
	if errors.Is(err, block.ErrLEOM) {
		if ferr := w.Finish(true); ferr != nil {
			return h.UUID, false, fmt.Errorf("catalog archive: %w", ferr)
		}
		return h.UUID, false, nil
	}
	if err != nil {
		return h.UUID, false, fmt.Errorf("catalog archive: %w", err)
	}
	if err := w.Finish(false); err != nil {
		return h.UUID, false, fmt.Errorf("catalog archive: %w", err)
	}
	return h.UUID, true, nil
}

// CatalogArchiveReader is the content of a catalog archive: the media
// catalog's bytes. Read fails with ErrIncomplete at the end of an
// archive the writer marked incomplete.
type CatalogArchiveReader struct {
	r      TapeReader
	Header ContentHeader
	Info   CatalogInfo
}

// OpenCatalogArchive continues after a content header the caller read.
func OpenCatalogArchive(r TapeReader, h ContentHeader, js []byte) (*CatalogArchiveReader, error) {
	if err := expect(h, MagicCatalogArchive, MagicCatalogArchive0); err != nil {
		return nil, err
	}
	var ch catalogArchiveHeader
	if err := parseJSON(h, js, &ch); err != nil {
		return nil, err
	}
	return &CatalogArchiveReader{r: r, Header: h, Info: CatalogInfo{ch.UUID, ch.MediaSetUUID, ch.SeqNr}}, nil
}

// Read reads the catalog bytes.
func (c *CatalogArchiveReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF && c.r.Incomplete() {
		return n, fmt.Errorf("catalog archive for media %s: %w", c.Info.Media, ErrIncomplete)
	}
	return n, err
}
