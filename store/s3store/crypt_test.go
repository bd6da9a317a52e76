package s3store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// bucketManifestJSON is the JSON of snap's manifest as the bucket has it.
func bucketManifestJSON(t *testing.T, s *store.Store, snap store.Snapshot) []byte {
	t.Helper()
	blob, _, err := s3store.BucketOf(s).Get(context.Background(), snapKey(snap, store.ManifestName), 1<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, err := chunk.DecodeBlob(nil, blob, 0)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRemoteEncrypted: an encrypted backup to a remote store publishes a
// signed manifest naming the key and encrypted chunk objects; another
// host reads it with the key only; a manifest update there keeps the
// signature good.
func TestRemoteEncrypted(t *testing.T) {
	a, b := twoHosts(t)
	key, err := crypt.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer key.Wipe()
	const marker = "REMOTE-PLAINTEXT-MARKER"
	data := bytes.Repeat([]byte(marker), (300<<10)/len(marker))
	g := store.Group{Type: store.TypeVM, ID: "enc"}
	snap := storetest.BackupImage(t, a, g, at(1), storetest.Image{Data: data, ChunkSize: 64 << 10, Key: key})
	raw := bucketManifestJSON(t, a, snap)
	if err := key.VerifyManifest(raw); err != nil {
		t.Fatalf("bucket manifest: %v", err)
	}
	if !bytes.Contains(raw, []byte(key.Fingerprint().String())) {
		t.Fatal("bucket manifest does not name the key")
	}
	n := 0
	for obj, err := range s3store.BucketOf(a).List(context.Background(), ".chunks/", "") {
		if err != nil {
			t.Fatal(err)
		}
		blob, _, err := s3store.BucketOf(a).Get(context.Background(), obj.Key, chunk.MaxBlobSize, nil)
		if err != nil {
			t.Fatal(err)
		}
		if kind, _ := chunk.BlobKind(blob); !kind.Encrypted() || bytes.Contains(blob, []byte(marker)) {
			t.Errorf("chunk object %s: %v", obj.Key, kind)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no chunk objects")
	}

	refresh(t, b)
	m, err := b.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	var ke *store.KeyMissingError
	if _, err := b.OpenSnapshotIndex(snap, m, "disk.img.fidx"); !errors.As(err, &ke) {
		t.Fatalf("host b without the key: %v", err)
	}
	b.SetKeys(store.NewKeys(key))
	x, err := b.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	c, err := store.NewCache(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := io.ReadAll(io.NewSectionReader(chunkcache.NewReader(context.Background(), x, c, 2), 0, x.Size()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read on host b: %d bytes, %v", len(got), err)
	}

	err = b.UpdateManifest(context.Background(), snap, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "ok", UPID: "u"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	raw = bucketManifestJSON(t, b, snap)
	var doc struct {
		Unprotected map[string]json.RawMessage `json:"unprotected"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || doc.Unprotected["verify_state"] == nil {
		t.Fatalf("update not in the bucket: %s", raw)
	}
	if err := key.VerifyManifest(raw); err != nil {
		t.Fatalf("bucket manifest after update: %v", err)
	}
}
