package verify

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// Verify of a remote store: chunks in index order whatever was asked
// (there is no disk to order them by), good snapshots pass, and a chunk
// corrupted in the bucket behind cairn's back is found, moved to its
// .bad key (copied, then deleted) and fails its snapshot, whose verify
// state reaches the bucket.
func TestVerifyRemoteStore(t *testing.T) {
	ctx := context.Background()
	s, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	g := store.Group{Type: store.TypeVM, ID: "remote"}
	good := backupImage(t, s, g, t0, randBytes("remote-good", 3*testChunk))
	bad := backupImage(t, s, store.Group{Type: store.TypeCT, ID: "remote"}, t0, randBytes("remote-bad", 4*testChunk))
	victim := chunksOf(t, s, bad, "disk.img.fidx")[1]
	b, key := openBucket(t, cfg), chunkObject(victim)
	h := victim.String()
	garbage, err := chunk.EncodeBlob(nil, randBytes("not the chunk", testChunk), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, key, objstore.Cond{}, garbage); err != nil {
		t.Fatal(err)
	}

	v := storetest.AttachRemoteStore(t, cfg) // another host: nothing cached
	st, rep, _ := runVerify(t, v, map[string]string{"chunk-order": jobs.OrderInode})
	if rep.ChunkOrder != jobs.OrderIndex || !strings.Contains(rep.ChunkOrderReason, "bucket") {
		t.Errorf("order %s (%s), want index order", rep.ChunkOrder, rep.ChunkOrderReason)
	}
	if st.State == jobs.StateOK || rep.SnapshotsOK != 1 || rep.SnapshotsFailed != 1 || rep.ChunksCorrupt != 1 || len(rep.Corrupt) != 1 {
		t.Fatalf("state %s, report %+v", st.State, rep)
	}
	c := rep.Corrupt[0]
	if c.Digest != h || !strings.HasPrefix(c.BadPath, "s3://"+cfg.Bucket+"/") || !strings.HasSuffix(c.BadPath, key+".0.bad") {
		t.Errorf("corrupt chunk %+v", c)
	}
	got, _, err := b.Get(ctx, key+".0.bad", chunk.MaxBlobSize, nil)
	if err != nil || !bytes.Equal(got, garbage) {
		t.Errorf(".bad object: %v (same content %v)", err, bytes.Equal(got, garbage))
	}
	if _, err := b.Head(ctx, key); err == nil {
		t.Error("the corrupt chunk is still under its key")
	}
	if r, ok := resultOf(rep, good); !ok || r.State != SnapOK {
		t.Errorf("good snapshot: %+v", r)
	}
	// the verify states are in the bucket: a third host sees them
	w := storetest.AttachRemoteStore(t, cfg)
	for snap, want := range map[store.Snapshot]string{good: SnapOK, bad: SnapFailed} {
		if vs, ok := verifyState(t, w, snap); !ok || vs.State != want {
			t.Errorf("%s: verify state %+v in the bucket, want %s", snap, vs, want)
		}
	}
}

// openBucket opens the bucket of a remote store behind cairn's back.
func openBucket(t testing.TB, cfg s3store.Config) *objstore.Bucket {
	t.Helper()
	cred, err := objstore.LoadCredentials(cfg.CredentialsFile)
	if err != nil {
		t.Fatal(err)
	}
	b, err := objstore.Open(context.Background(), cfg.Config, cred, objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// chunkObject is the object key of chunk d.
func chunkObject(d chunk.Digest) string {
	h := d.String()
	return ".chunks/" + h[:4] + "/" + h
}
