package storesync

import (
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestSyncRequests counts a sync's requests into a bucket, by class, per
// chunk (the README's figures): a chunk the bucket lacks costs one (a
// conditional PUT), one it has under another group two (the PUT refused,
// then the touch), besides the sweep record's looks, which a writer's
// requests share.
func TestSyncRequests(t *testing.T) {
	a := storetest.NewStore(t)
	r, b := storetest.NewMemStore(t)
	backups(t, a, vm1, 3) // 16 + 2 chunks
	reqs := storetest.CountRequests(b, nil)
	rep := mustRun(t, a, r, Options{})
	n := reqs.Take()
	t.Logf("sync of new data: %s", n.PerChunk(int(rep.ChunksCopied+rep.ChunksReused)))
	if rep.ChunksCopied != 18 || n.Chunk() > 18 {
		t.Errorf("%d chunks copied with %d requests on chunks, want 18 with one each", rep.ChunksCopied, n.Chunk())
	}

	twin := store.Group{Type: store.TypeVM, ID: "101"}
	storetest.BackupImage(t, a, twin, t0, storetest.Image{Data: imageAt(vm1.String(), 0), ChunkSize: chunkSize})
	reqs.Take()
	rep = mustRun(t, a, r, Options{Group: &twin})
	n = reqs.Take()
	t.Logf("sync of stored data, another group: %s", n.PerChunk(int(rep.ChunksReused)))
	if rep.ChunksCopied != 0 || rep.ChunksReused != 16 || n.Chunk() > 2*16 {
		t.Errorf("%+v with %d requests on chunks, want 16 chunks reused with two each", rep, n.Chunk())
	}
}
