package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// Verify of encrypted snapshots in a bucket, from another host: without
// the key their chunks pass by CRC and size, even one whose GCM tag was
// changed in the bucket (the CRC does not cover it, as in PBS); with the
// key that chunk fails with ErrAuth and the good snapshot passes.
func TestVerifyRemoteEncrypted(t *testing.T) {
	ctx := context.Background()
	s, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	k := newKey(t)
	good := backupEncrypted(t, s, store.Group{Type: store.TypeVM, ID: "good"}, t0, crypttest.Data("remote good"), k)
	bad := backupEncrypted(t, s, store.Group{Type: store.TypeVM, ID: "bad"}, t0, crypttest.Data("remote bad"), k)
	victim := chunksOf(t, s, bad, "disk.img.fidx")[0]
	b, key := openBucket(t, cfg), chunkObject(victim)
	blob, _, err := b.Get(ctx, key, chunk.MaxBlobSize, nil)
	if err != nil {
		t.Fatal(err)
	}
	blob[chunk.BlobHeaderSize+crypt.IVSize] ^= 1 // the tag
	if _, err := b.Put(ctx, key, objstore.Cond{}, blob); err != nil {
		t.Fatal(err)
	}

	st, rep, _ := runVerify(t, storetest.AttachRemoteStore(t, cfg), nil)
	if st.State != jobs.StateOK || rep.SnapshotsOK != 2 || rep.ChunksWithoutKey == 0 || rep.ChunksDecrypted != 0 {
		t.Fatalf("without key: state %s, report %+v", st.State, rep)
	}
	v := storetest.AttachRemoteStore(t, cfg)
	v.SetKeys(store.NewKeys(k))
	st, rep, _ = runVerify(t, v, nil)
	if st.State != jobs.StateFailed || rep.ChunksCorrupt != 1 || rep.Corrupt[0].Digest != victim.String() ||
		!strings.Contains(rep.Corrupt[0].Reason, crypt.ErrAuth.Error()) {
		t.Fatalf("with key: state %s, report %+v", st.State, rep)
	}
	if r := snapResult(t, rep, good); r.State != SnapOK {
		t.Errorf("good snapshot: %+v", r)
	}
	if r := snapResult(t, rep, bad); r.State != SnapFailed {
		t.Errorf("damaged snapshot: %+v", r)
	}
}
