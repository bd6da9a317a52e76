package s3store_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// BenchmarkRemoteRefresh measures a refresh of a mirror from a bucket of
// 20 groups × 10 snapshots (3 files each, 64 KiB indexes): the first,
// which downloads everything, and one that finds nothing changed (what
// Open and a mount's periodic refresh cost).
//
//	CAIRN_MINIO=… go test -run '^$' -bench RemoteRefresh -benchtime 5x ./store/
func BenchmarkRemoteRefresh(b *testing.B) {
	srv := miniotest.Start(b)
	h1, cfg := storetest.NewRemoteStoreOn(b, srv, s3store.Config{})
	ctx := context.Background()
	bk := s3store.BucketOf(h1)
	index := make([]byte, 64<<10)
	for g := range 20 {
		for d := range 10 {
			snap := store.Snapshot{Group: store.Group{Type: store.TypeVM, ID: fmt.Sprint(g)}, Time: at(d)}
			for name, data := range map[string][]byte{"disk.img.fidx": index, "notes.blob": []byte("n"), store.ManifestName: []byte("m")} {
				if _, err := bk.Put(ctx, snapKey(snap, name), objstore.Cond{}, data); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			h := storetest.AttachRemoteStore(b, cfg) // Open refreshed it: start from nothing
			if err := os.RemoveAll(filepath.Join(h.Root(), store.TypeVM)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if err := h.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		h := storetest.AttachRemoteStore(b, cfg)
		for b.Loop() {
			if err := h.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
