package s3store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
)

// A refresh lists a type's directory in ranges of groups, several at
// once (meta_list.go): with many groups, among them names that are
// prefixes of others (a range starting at g05/ must not take g05-x/ or
// g05.a/, which sort before it), every snapshot file is mirrored once,
// and snapshots whose manifests left the bucket, at the ranges' edges
// and inside them, leave the mirror while the others stay.
func TestRemoteRefreshManyGroups(t *testing.T) {
	a, b := twoHosts(t)
	ctx := context.Background()
	bk := s3store.BucketOf(a)
	ids := []string{"g05", "g05-x", "g05.a", "g050x", "h", "g"}
	for i := range 90 {
		ids = append(ids, fmt.Sprintf("g%03d", i))
	}
	var snaps []store.Snapshot
	for i, id := range ids {
		for d := range 1 + i%3 {
			snap := store.Snapshot{Group: store.Group{Type: store.TypeHost, ID: id}, Time: at(d)}
			for _, name := range []string{"x.blob", store.ManifestName} {
				if _, err := bk.Put(ctx, snapKey(snap, name), objstore.Cond{}, mustBlob(t, id)); err != nil {
					t.Fatal(err)
				}
			}
			snaps = append(snaps, snap)
		}
	}
	refresh(t, b)
	tree := listTree(t, b.Root())
	for _, snap := range snaps {
		for _, name := range []string{"x.blob", store.ManifestName} {
			if p := filepath.Join(b.SnapshotPath(snap), name); !tree[p] {
				t.Errorf("not mirrored: %s", p)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	gone := map[store.Snapshot]bool{}
	for i, snap := range snaps {
		if i%4 == 1 {
			if err := bk.Delete(ctx, snapKey(snap, store.ManifestName), snapKey(snap, "x.blob")); err != nil {
				t.Fatal(err)
			}
			gone[snap] = true
		}
	}
	refresh(t, b)
	for _, snap := range snaps {
		if f := finished(t, b, snap); f == gone[snap] {
			t.Errorf("snapshot %s: finished in the mirror %v, in the bucket %v", snap, f, !gone[snap])
		}
	}
}
