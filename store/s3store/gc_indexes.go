package s3store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/objstore"
)

// markBucketIndexes marks the chunks of the bucket's index objects that
// the mirror does not hold as they are in the bucket: those of
// snapshots whose manifest is not (or no longer) there, which the mirror
// drops (a backup that died before its manifest, a forget under way). So
// the marked set covers every index of the bucket, finished or not, as
// rule 4 says, whatever the mirror keeps. Each is downloaded into the
// set's directory (bounded by the largest index a snapshot may have),
// marked and removed. An index that cannot be read stops the GC
// (index.ErrFormat). It returns how many it marked.
func (c *remoteCollector) markBucketIndexes(ctx context.Context) (int, error) {
	tops, err := c.b.ListDirs(ctx, "")
	if err != nil {
		return 0, fmt.Errorf("list the bucket's snapshots: %w", err)
	}
	n := 0
	for _, top := range tops {
		switch top {
		case "ns/", store.TypeCT + "/", store.TypeHost + "/", store.TypeVM + "/":
		default:
			continue // no snapshot there (the refresh refused what is not ours)
		}
		for obj, err := range c.b.List(ctx, top, "") {
			if err != nil {
				return n, fmt.Errorf("list the bucket's snapshots: %w", err)
			}
			marked, err := c.markBucketIndex(ctx, obj)
			if err != nil {
				return n, err
			}
			if marked {
				n++
			}
		}
	}
	return n, nil
}

// markBucketIndex marks one listed object if it is an index the mirror
// does not have as it is.
func (c *remoteCollector) markBucketIndex(ctx context.Context, obj objstore.ObjectInfo) (bool, error) {
	_, name, err := parseSnapshotKey(obj.Key)
	if err != nil {
		return false, nil // not a snapshot file: the refresh names it
	}
	if _, ok := index.Kind(name); !ok {
		return false, nil
	}
	if fi, err := os.Lstat(filepath.Join(c.s.root, obj.Key)); err == nil && fi.Mode().IsRegular() && fi.Size() == obj.Size {
		return false, nil // the mark reads the mirror's copy
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("%w: %w", index.ErrFormat, err)
	}
	tmp := filepath.Join(c.dir, "index"+filepath.Ext(name))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return false, fmt.Errorf("gc: %w", err)
	}
	defer os.Remove(tmp)
	_, err = c.b.GetTo(ctx, obj.Key, fileLimit(name), f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, objstore.ErrNotExist) {
		return false, nil // removed since the listing: its snapshot is gone
	}
	if err != nil {
		return false, fmt.Errorf("%w: bucket key %s: %w", index.ErrFormat, obj.Key, err)
	}
	x, err := index.Open(tmp)
	if err != nil {
		return false, fmt.Errorf("%w: bucket key %s: %w", index.ErrFormat, obj.Key, err)
	}
	defer x.Close()
	for i := range x.Len() {
		if i&1023 == 0 && ctx.Err() != nil {
			return false, ctx.Err()
		}
		d, _, _ := x.Chunk(i)
		if err := c.set.Add(d); err != nil {
			return false, err
		}
	}
	if err := x.Err(); err != nil {
		return false, fmt.Errorf("%w: bucket key %s: %w", index.ErrFormat, obj.Key, err)
	}
	return true, nil
}
