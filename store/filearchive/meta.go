package filearchive

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/pxar"
)

// OpenMetadata opens file archive ar for listing only: of a split
// archive it opens the metadata stream's index alone, so the payload
// index (NAME.ppxar.didx) and its chunks are never read; entries list
// and stat as with Open, but opening a split archive's file fails. A
// single-stream archive (NAME.pxar.didx) is opened as by Open, its file
// contents being inline in its only stream.
func OpenMetadata(ctx context.Context, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive,
	c *chunkcache.Cache) (*pxar.Accessor, func() error, error) {
	if ar.Kind != store.ArchiveSplitPxar {
		return Open(ctx, s, snap, m, ar, c)
	}
	x, err := s.OpenSnapshotIndex(snap, m, strings.TrimSuffix(ar.Name, ".pxar")+".mpxar.didx")
	if err != nil {
		return nil, nil, fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, err)
	}
	acc, err := pxar.NewAccessor(ctx, chunkcache.NewReader(ctx, x, c, metaReadahead), x.Size(), nil, 0)
	if err != nil {
		x.Close()
		return nil, nil, fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, err)
	}
	return acc, x.Close, nil
}
