package catalog

import (
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// The checks below are PBS's: labels are files 0 and 1 in order; archives
// start at file 2, never go back, and chunk records only appear inside a
// chunk archive. Catalog archives are not recorded, so files may be
// skipped.

// maxFile bounds tape file numbers (a tape holds thousands of files):
// numbers from 2^63 on would be negative as the int64 of Catalog.last,
// whose -1 means no file yet, and let a catalog go back to file 0.
const maxFile = 1 << 48

func (c *Catalog) checkNext(what string, file uint64, min uint64) error {
	if file >= maxFile {
		return fmt.Errorf("%w: %s in file %d, beyond any tape", ErrCorrupt, what, file)
	}
	if c.open != nil {
		return fmt.Errorf("%w: %s in file %d inside chunk archive %d", ErrOrder, what, file, c.open.Number)
	}
	next := uint64(c.last + 1)
	if file < min || file < next {
		return fmt.Errorf("%w: %s in file %d, next possible file is %d", ErrOrder, what, file, max(next, min))
	}
	return nil
}

func (c *Catalog) label(file uint64, uuid format.UUID, seqNr uint64) error {
	if file > 1 || c.open != nil || int64(file) != c.last+1 {
		return fmt.Errorf("%w: label record for file %d after file %d", ErrOrder, file, c.last)
	}
	switch file {
	case 0:
		if uuid != c.media {
			return fmt.Errorf("%w: catalog of media %s, label says %s", ErrMismatch, c.media, uuid)
		}
		if seqNr != 0 {
			return fmt.Errorf("%w: media label record with sequence number %d", ErrCorrupt, seqNr)
		}
	case 1:
		c.set, c.seqNr, c.hasSet = uuid, seqNr, true
	}
	c.files[file] = &File{Number: file, Kind: KindLabel, UUID: uuid}
	c.last = int64(file)
	return nil
}

func (c *Catalog) startArchive(file uint64, uuid format.UUID, store string) error {
	if err := c.checkNext("chunk archive", file, 2); err != nil {
		return err
	}
	c.open = &File{Number: file, Kind: KindChunkArchive, UUID: uuid, Store: store}
	return nil
}

func (c *Catalog) endArchive(file uint64, uuid format.UUID, digests []chunk.Digest) error {
	a := c.open
	if a == nil || a.Number != file || a.UUID != uuid {
		return fmt.Errorf("%w: end of chunk archive %d (%s) that was not started", ErrOrder, file, uuid)
	}
	s := c.store(a.Store)
	for _, d := range digests {
		s.chunks[d] = file
	}
	a.Chunks = len(digests)
	c.files[file] = a
	c.open = nil
	c.last = int64(file)
	return nil
}

func (c *Catalog) snapshot(file uint64, uuid format.UUID, store, snapshot string) error {
	if err := c.checkNext("snapshot archive", file, 2); err != nil {
		return err
	}
	if snapshot == "" || strings.ContainsRune(snapshot, 0) {
		return fmt.Errorf("%w: snapshot name %q", ErrCorrupt, snapshot)
	}
	c.store(store).snapshots[snapshot] = file
	c.files[file] = &File{Number: file, Kind: KindSnapshot, UUID: uuid, Store: store, Snapshot: snapshot}
	c.last = int64(file)
	return nil
}

func checkNames(store, snapshot string) error {
	if len(store) == 0 || len(store) > 255 || strings.ContainsRune(store, ':') {
		return fmt.Errorf("catalog: bad datastore name %q", store)
	}
	if len(snapshot) > 65535 {
		return fmt.Errorf("catalog: snapshot name of %d bytes", len(snapshot))
	}
	return nil
}

// RegisterChunkArchive records a finished chunk archive and the chunks it
// holds. It takes effect in memory at once and on disk at Commit.
func (c *Catalog) RegisterChunkArchive(uuid format.UUID, file uint64, store string, digests []chunk.Digest) error {
	if c.f == nil {
		return ErrReadOnly
	}
	if err := checkNames(store, ""); err != nil {
		return err
	}
	if err := c.startArchive(file, uuid, store); err != nil {
		return err
	}
	if err := c.endArchive(file, uuid, digests); err != nil {
		return err
	}
	c.pending = appendArchiveStart(c.pending, file, uuid, store)
	for _, d := range digests {
		c.pending = append(c.pending, 'C')
		c.pending = append(c.pending, d[:]...)
	}
	c.pending = appendArchiveEnd(c.pending, file, uuid)
	return nil
}

// RegisterSnapshot records a complete snapshot archive.
func (c *Catalog) RegisterSnapshot(uuid format.UUID, file uint64, store, snapshot string) error {
	if c.f == nil {
		return ErrReadOnly
	}
	if err := checkNames(store, snapshot); err != nil {
		return err
	}
	if err := c.snapshot(file, uuid, store, snapshot); err != nil {
		return err
	}
	c.pending = appendSnapshot(c.pending, file, uuid, store, snapshot)
	return nil
}
