package s3store_test

import (
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// requestChunks is the chunks of the images the request counts are made
// with.
const requestChunks = 64

// TestRequestsPerChunk counts a backup's requests on the in-memory
// bucket, by class, per chunk (the README's figures): a backup of new
// data costs one request per chunk (a conditional PUT, no HEAD first);
// a backup of data the bucket holds under another group (no base
// snapshot) two (the look and the touch); a second backup of a group
// none for the chunks of its base.
func TestRequestsPerChunk(t *testing.T) {
	s, b := storetest.NewMemStore(t)
	reqs := storetest.CountRequests(b, nil)
	data := storetest.RandBytes("requests", requestChunks<<16)
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	img := storetest.Image{Data: data, ChunkSize: 1 << 16}

	storetest.BackupImage(t, s, store.Group{Type: store.TypeVM, ID: "1"}, at, img)
	n := reqs.Take()
	t.Logf("new data: %s", n.PerChunk(requestChunks))
	if got := n.Chunk(); got > requestChunks+1 { // and the zero chunk
		t.Errorf("a backup of %d new chunks made %d requests on chunks, want one each", requestChunks, got)
	}

	storetest.BackupImage(t, s, store.Group{Type: store.TypeVM, ID: "2"}, at, img)
	n = reqs.Take()
	t.Logf("stored data, another group: %s", n.PerChunk(requestChunks))
	if got := n.Chunk(); got > 2*(requestChunks+1) {
		t.Errorf("a backup of %d stored chunks made %d requests on chunks, want two each", requestChunks, got)
	}

	storetest.BackupImage(t, s, store.Group{Type: store.TypeVM, ID: "2"}, at.Add(time.Hour), img)
	n = reqs.Take()
	t.Logf("stored data, same group: %s", n.PerChunk(requestChunks))
	if got := n.Chunk(); got > 2 {
		t.Errorf("a backup of %d chunks of its base made %d requests on chunks, want none (the zero chunk's excepted)", requestChunks, got)
	}
}
