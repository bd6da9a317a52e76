package storesync

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// Sync copies encrypted snapshots as they are, without their key: the
// target holds the same files and chunk blobs, the manifest's signature
// still holds, and the image reads back with the key. Plain groups beside
// them copy as before.
func TestSyncEncrypted(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	k := crypttest.NewKey(t)
	enc := store.Group{NS: "sec", Type: store.TypeVM, ID: "300"}
	plain := backups(t, a, vm1, 1)
	data := crypttest.Data("sync")
	snap := crypttest.Backup(t, a, enc, t0, crypttest.Image{Data: data, Blobs: map[string][]byte{"qemu.conf.blob": []byte("memory: 1G")}}, k)

	rep := mustRun(t, a, b, Options{})
	if rep.SnapshotsCopied != 2 {
		t.Fatalf("sync: %+v", rep)
	}
	sameSnapshot(t, a, b, plain[0])
	ma, _ := a.ReadManifest(snap)
	for _, fi := range ma.Files {
		x, _ := os.ReadFile(filepath.Join(a.SnapshotPath(snap), fi.Filename))
		y, err := os.ReadFile(filepath.Join(b.SnapshotPath(snap), fi.Filename))
		if err != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s differs in the target (%v)", fi.Filename, err)
		}
	}
	chunks := crypttest.Chunks(t, a, snap, "disk.img.fidx")
	for d, kind := range chunks {
		if !kind.Encrypted() {
			t.Fatalf("chunk %s is %s", d, kind)
		}
		x, _ := os.ReadFile(a.ChunkPath(d))
		y, err := os.ReadFile(b.ChunkPath(d))
		if err != nil || !bytes.Equal(x, y) {
			t.Fatalf("chunk %s differs in the target (%v)", d, err)
		}
	}

	kb := crypttest.KeyedView(t, b, k)
	mb, err := kb.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	if key, err := kb.SnapshotKey(snap, mb); err != nil || key == nil {
		t.Fatalf("copied manifest: key %v, %v", key != nil, err)
	}
	if got, err := crypttest.ReadImage(t, kb, snap, "disk.img.fidx"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("copied image with the key: %v, equal %v", err, bytes.Equal(got, data))
	}
	conf, err := kb.ReadBlob(snap, mb, "qemu.conf.blob")
	if err != nil || string(conf) != "memory: 1G" {
		t.Fatalf("copied blob with the key: %q %v", conf, err)
	}
	if _, err := crypttest.ReadImage(t, b, snap, "disk.img.fidx"); err == nil {
		t.Fatal("the copied encrypted image reads without its key")
	}
}
