package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/objstore"
)

// markRecent marks the indexes of the snapshots the writer registry says
// were published lately (registry.go) that the mirror does not
// hold finished: a listing that lags did not show them to the refresh.
// Each manifest and index is read by its key. A name that is not a
// snapshot's, or a manifest that is gone (forgotten, or never put), is
// passed over; an index that cannot be read stops the GC (index.ErrFormat).
// It returns how many snapshots it marked.
func (c *remoteCollector) markRecent(ctx context.Context) (int, error) {
	data, _, err := c.b.Get(ctx, writerRegistryKey, maxRegistryBytes, nil)
	if errors.Is(err, objstore.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("writer registry: %w", err)
	}
	var reg writerRegistry
	if err := json.Unmarshal(data, &reg); err != nil {
		return 0, fmt.Errorf("writer registry %s: %w", writerRegistryKey, err)
	}
	n := 0
	for _, rc := range reg.Recent {
		snap, _, err := parseSnapshotKey(rc.Snapshot + "/" + store.ManifestName)
		if err != nil {
			continue // not a snapshot's name: nothing to mark
		}
		if fi, err := os.Lstat(filepath.Join(c.s.SnapshotPath(snap), store.ManifestName)); err == nil && fi.Mode().IsRegular() {
			continue // in the mirror: marked with it
		}
		marked, err := c.markFromBucket(ctx, snap)
		if err != nil {
			return n, err
		}
		if marked {
			n++
		}
	}
	return n, nil
}

// markFromBucket marks every index of snap as its manifest in the bucket
// lists them; false when it has no manifest there.
func (c *remoteCollector) markFromBucket(ctx context.Context, snap store.Snapshot) (bool, error) {
	key := store.SnapshotFile(snap, store.ManifestName)
	blob, _, err := c.b.Get(ctx, key, store.MaxManifestBlob, nil)
	if errors.Is(err, objstore.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%w: bucket key %s: %w", index.ErrFormat, key, err)
	}
	m, err := store.ParseManifest("bucket key "+key, blob, snap)
	if err != nil {
		return false, fmt.Errorf("%w: %w", index.ErrFormat, err)
	}
	for _, f := range m.Files {
		if _, ok := index.Kind(f.Filename); !ok {
			continue
		}
		// Size -1: never the mirror's copy, which this snapshot lacks
		obj := objstore.ObjectInfo{Key: store.SnapshotFile(snap, f.Filename), Size: -1}
		if _, err := c.markBucketIndex(ctx, obj); err != nil {
			return false, err
		}
	}
	return true, nil
}
