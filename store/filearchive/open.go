package filearchive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/pxar"
)

// Readahead of the metadata stream's chunkcache.Reader: directory listings
// read it forward a little. File contents are read in long runs: the
// payload stream's reader loads ahead as far as the store wants
// (Store.Readahead).
const metaReadahead = 2

// ErrNotFileArchive is returned when an archive is not a pxar archive.
var ErrNotFileArchive = errors.New("not a file (pxar) archive")

// StatTableName is the stat table that goes with split archive name
// (root.pxar → root.pxar.stat.didx).
func StatTableName(name string) string { return name + ".stat.didx" }

// Open opens file archive ar of snapshot snap (manifest m) for random
// access: a pxar.Accessor over chunkcache.Readers of its streams through the
// shared cache c. The indexes are checked against the manifest. close
// releases the indexes; prefetches end with ctx.
func Open(ctx context.Context, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive,
	c *chunkcache.Cache) (acc *pxar.Accessor, close func() error, err error) {
	o, err := openArchive(ctx, s, snap, m, ar, c, false)
	if err != nil {
		return nil, nil, err
	}
	return o.acc, o.close, nil
}

// opened is an open archive and its indexes (payload nil for a single
// stream).
type opened struct {
	acc           *pxar.Accessor
	meta, payload index.Index
}

func (o *opened) close() error {
	var errs []error
	for _, x := range []index.Index{o.meta, o.payload} {
		if x != nil {
			errs = append(errs, x.Close())
		}
	}
	return errors.Join(errs...)
}

// openArchive opens an archive; pinned reads the metadata stream through
// a pinnedReader (for one goroutine reading forward), else through an
// chunkcache.Reader.
func openArchive(ctx context.Context, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive,
	c *chunkcache.Cache, pinned bool) (*opened, error) {
	var files []string
	switch ar.Kind {
	case store.ArchiveSplitPxar:
		base := strings.TrimSuffix(ar.Name, ".pxar")
		files = []string{base + ".mpxar.didx", base + ".ppxar.didx"}
	case store.ArchiveSinglePxar:
		files = []string{ar.Name + ".didx"}
	default:
		return nil, fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, ErrNotFileArchive)
	}
	o := &opened{}
	for i, f := range files {
		x, err := s.OpenSnapshotIndex(snap, m, f)
		if err != nil {
			o.close()
			return nil, fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, err)
		}
		if i == 0 {
			o.meta = x
		} else {
			o.payload = x
		}
	}
	var meta io.ReaderAt = chunkcache.NewReader(ctx, o.meta, c, metaReadahead)
	if pinned {
		meta = &pinnedReader{ctx: ctx, idx: o.meta, c: c}
	}
	var payload io.ReaderAt
	var psize int64
	if o.payload != nil {
		payload = chunkcache.NewReader(ctx, o.payload, c, s.Readahead())
		psize = o.payload.Size()
	}
	var err error
	o.acc, err = pxar.NewAccessor(ctx, meta, o.meta.Size(), payload, psize)
	if err != nil {
		o.close()
		return nil, fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, err)
	}
	return o, nil
}

// OpenName is Open with the archive named as the user gives it
// (root.pxar).
func OpenName(ctx context.Context, s *store.Store, snap store.Snapshot, m *store.Manifest, name string,
	c *chunkcache.Cache) (*pxar.Accessor, func() error, error) {
	ar, err := store.FindArchive(m, name)
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot %s: %w", snap, err)
	}
	return Open(ctx, s, snap, m, ar, c)
}

// openPrevious opens archive name of snapshot snap as the base of an
// incremental backup: its accessor, payload index and (if it has one)
// stat table. It fails unless the archive is a split archive.
func openPrevious(ctx context.Context, s *store.Store, snap store.Snapshot, name string, c *chunkcache.Cache) (*previous, error) {
	m, err := s.ReadManifest(snap)
	if err != nil {
		return nil, err
	}
	ar, err := store.FindArchive(m, name)
	if err != nil {
		return nil, err
	}
	if ar.Kind != store.ArchiveSplitPxar {
		return nil, fmt.Errorf("snapshot %s archive %s: not a split archive", snap, name)
	}
	o, err := openArchive(ctx, s, snap, m, ar, c, true)
	if err != nil {
		return nil, err
	}
	closers := []func() error{o.close}
	p := &previous{snap: snap, acc: o.acc, payload: o.payload}
	p.close = func() error {
		var errs []error
		for _, f := range closers {
			errs = append(errs, f())
		}
		return errors.Join(errs...)
	}
	acc := o.acc
	root, err := newDirCursor(ctx, acc, acc.Root())
	if err != nil {
		p.close()
		return nil, err
	}
	p.dirs = []prevDir{{cur: root}}
	if _, ok := m.File(StatTableName(name)); !ok {
		return p, nil // made by PBS or without a table: PBS's own comparison
	}
	sx, err := s.OpenSnapshotIndex(snap, m, StatTableName(name))
	if err != nil {
		p.close()
		return nil, err
	}
	closers = append(closers, sx.Close)
	r := chunkcache.NewReader(ctx, sx, c, chunkcache.DefaultReadahead)
	if p.stats, err = newStatReader(sx.Path(), io.NewSectionReader(r, 0, sx.Size())); err != nil {
		p.close()
		return nil, err
	}
	return p, nil
}
