package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// A mount of a remote store shows what another host backs up into the
// bucket, and loses what it forgets, once the mount's periodic refresh
// of the store has run (real FUSE mount, real MinIO).
func TestMountRefreshesRemoteStore(t *testing.T) {
	needFUSE(t)
	h1, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	h2 := storetest.AttachRemoteStore(t, cfg)
	_, mnt, _ := mountT(t, Options{Store: h2, Refresh: 100 * time.Millisecond, StoreRefresh: 200 * time.Millisecond})
	g := store.Group{Type: store.TypeVM, ID: "elsewhere"}
	data := randomData(77, 300_000)
	snap := storetest.BackupImage(t, h1, g, time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC), storetest.Image{Data: data, ChunkSize: 64 << 10})
	p := filepath.Join(mnt, snap.String(), "disk.img")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got, err := os.ReadFile(p)
		if err == nil {
			if !bytes.Equal(got, data) {
				t.Fatalf("%s differs from what host 1 backed up", p)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("host 1's snapshot never showed in host 2's mount: %v", err)
		}
	}
	if err := h1.ForgetSnapshot(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	waitGone(t, filepath.Join(mnt, snap.String()))
}
