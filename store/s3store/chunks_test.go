package s3store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

func testBlob(t testing.TB, seed, size int) (chunk.Digest, []byte) {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + seed*13 + i/251)
	}
	blob, err := chunk.EncodeBlob(nil, data, false)
	if err != nil {
		t.Fatal(err)
	}
	return chunk.Sum(data), blob
}

// TestRemoteChunkCache: a chunk read once is read from the disk cache
// afterwards (even when the bucket lost it), but not one a scan read, a
// damaged cached copy is dropped and read again from the bucket,
// verify's reads bypass the cache, and a trim keeps the cache within its
// bound.
func TestRemoteChunkCache(t *testing.T) { eachRemote(t, 1<<20, testRemoteChunkCache) }

func testRemoteChunkCache(t *testing.T, rt remoteTest) {
	ctx := context.Background()
	s, b := rt.s, rt.b
	d, blob := testBlob(t, 1, 100<<10)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	cached := of(s).remote.cache.path(d)
	if _, err := os.Stat(cached); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an upload filled the read cache: %v", err)
	}
	if got, err := s.ReadChunk(ctx, d, store.ChunkOptions{Scan: true}); err != nil || string(got.Bytes()) != string(blob) {
		t.Fatalf("a scan's read: %v", err)
	}
	if _, err := os.Stat(cached); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a scan's read filled the disk cache: %v", err)
	}
	if _, err := s.ReadChunk(ctx, d, store.ChunkOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cached); err != nil {
		t.Fatalf("a read left no copy in the disk cache: %v", err)
	}
	if err := b.Delete(ctx, chunkKey(d)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadChunk(ctx, d, store.ChunkOptions{}); err != nil || string(got.Bytes()) != string(blob) {
		t.Fatalf("read from the disk cache: %v", err)
	}
	if _, err := s.ReadChunk(ctx, d, store.ChunkOptions{Direct: store.DirectAlways}); !errors.Is(err, store.ErrMissingChunk) {
		t.Fatalf("verify's read of a chunk gone from the bucket: %v, want ErrMissingChunk", err)
	}
	// a damaged copy: dropped, read from the bucket
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	damaged := []byte(string(blob))
	damaged[len(damaged)-1] ^= 1
	if err := os.WriteFile(cached, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadChunk(ctx, d, store.ChunkOptions{}); err != nil || string(got.Bytes()) != string(blob) {
		t.Fatalf("read past a damaged cached copy: %v", err)
	}
	// trim: 20 chunks of 100 KiB through a 1 MiB cache
	for i := range 20 {
		d, blob := testBlob(t, 100+i, 100<<10)
		if _, err := s.InsertChunk(d, blob); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ReadChunk(ctx, d, store.ChunkOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	of(s).remote.cache.close() // wait for a trim in flight
	if err := of(s).remote.cache.trim(); err != nil {
		t.Fatal(err)
	}
	_, total, err := of(s).remote.cache.scan()
	if err != nil || total > 1<<20 || total == 0 {
		t.Fatalf("cache holds %d bytes after a trim, bound %d (%v)", total, 1<<20, err)
	}
}

// TestRemoteHostileChunks: an object too large for a blob is a corrupt
// chunk (refused before it is read), and keys under .chunks/ that are
// not chunk keys are passed over by WalkChunks.
func TestRemoteHostileChunks(t *testing.T) { eachRemote(t, 0, testRemoteHostileChunks) }

func testRemoteHostileChunks(t *testing.T, rt remoteTest) {
	ctx := context.Background()
	s, b := rt.s, rt.b
	d, blob := testBlob(t, 2, 1000)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{".chunks/0000/notadigest", ".chunks/" + d.String(),
		".chunks/ffff/" + d.String(), ".chunks/" + d.String()[:4] + "/" + strings.ToUpper(d.String()),
		".chunks/" + d.String()[:4] + "/" + d.String() + ".0.bad"} {
		if _, err := b.Put(ctx, key, objstore.Cond{}, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var got []chunk.Digest
	if err := s.WalkChunks(ctx, func(d chunk.Digest) error { got = append(got, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != d {
		t.Fatalf("WalkChunks: %v, want only %s", got, d)
	}
	if rt.mem != nil {
		return // the 128 MiB object, refused by its Content-Length: on MinIO
	}
	if testing.Short() {
		t.Skip("the 128 MiB object: not with -short")
	}
	big := chunk.Sum([]byte("big"))
	if _, err := b.Put(ctx, chunkKey(big), objstore.Cond{}, make([]byte, chunk.MaxBlobSize+1)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadChunk(ctx, big, store.ChunkOptions{}); !errors.Is(err, store.ErrCorruptChunk) {
		t.Fatalf("object larger than a blob: %v, want ErrCorruptChunk", err)
	}
}

// TestRemoteReuseTouches: a writer that reuses a chunk touches it (its
// LastModified moves), whatever age a HEAD says it has: a HEAD may be
// answered by a stale cache, a touch (a copy) is made by the server.
func TestRemoteReuseTouches(t *testing.T) { eachRemote(t, 0, testRemoteReuseTouches) }

func testRemoteReuseTouches(t *testing.T, rt remoteTest) {
	ctx := context.Background()
	s, b := rt.s, rt.b
	rc := &remoteChunks{mirror: store.LocalBackend(s.Root()), r: of(s).remote} // as the opener makes it
	d, blob := testBlob(t, 3, 5000)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	last, err := b.Head(ctx, chunkKey(d))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		rt.pass(1100 * time.Millisecond) // LastModified has a second's resolution
		if err := rc.TouchChunk(ctx, d); err != nil {
			t.Fatal(err)
		}
		after, err := b.Head(ctx, chunkKey(d))
		if err != nil {
			t.Fatal(err)
		}
		if !after.LastModified.After(last.LastModified) {
			t.Fatalf("reuse of a chunk: LastModified %v, was %v", after.LastModified, last.LastModified)
		}
		last = after
	}
}

// TestRemoteReuseWaitsForSweep: a writer that touches a chunk while a GC
// sweeps waits for the sweep to end and finds the chunk gone when the
// sweep removed it: the uploader then stores it again. The GC here is
// the test: once the touch has landed, it deletes the chunk (as a sweep
// that listed it before), ends its sweep record and releases its lease.
func TestRemoteReuseWaitsForSweep(t *testing.T) { eachRemote(t, 0, testRemoteReuseWaitsForSweep) }

func testRemoteReuseWaitsForSweep(t *testing.T, rt remoteTest) {
	ctx := context.Background()
	s, b := rt.s, rt.b
	defer func(p time.Duration) { sweepPoll = p }(sweepPoll)
	sweepPoll = 10 * time.Millisecond
	d, blob := testBlob(t, 4, 5000)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	before, err := b.Head(ctx, chunkKey(d))
	if err != nil {
		t.Fatal(err)
	}
	rt.pass(1100 * time.Millisecond) // a touch moves LastModified
	gc, err := objstore.Acquire(ctx, b, gcLeaseKey, objstore.Holder{Host: "h", Command: "gc", Data: []byte(`{"phase":"sweep"}`)}, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() {
		err := sweepAfterTouch(ctx, b, gc, chunkKey(d), before.LastModified)
		rt.pass(3 * time.Second) // the writer's wait for the record's end to be surely past
		released <- err
	}()
	var f store.TouchFilter
	ok, err := s.RefreshChunk(&f, d)
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if err != nil || ok {
		t.Fatalf("RefreshChunk during a sweep that removed the chunk: %v, %v; want false", ok, err)
	}
	// the uploader stores it again
	u := s.NewUploader(ctx, 1, nil, nil, func(chunk.Digest, int) error { return nil })
	data := make([]byte, 5000)
	for i := range data {
		data[i] = byte(i*7 + 4*13 + i/251)
	}
	if err := u.Submit(data, false); err != nil {
		t.Fatal(err)
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if n := u.Stats.NewChunks.Load(); n != 1 {
		t.Fatalf("uploader stored %d chunks, want the one the sweep removed", n)
	}
	if has, err := s.HasChunk(ctx, d); err != nil || !has {
		t.Fatal("chunk not back in the bucket")
	}
}

// TestRemoteKnownChunksCostNothing: a second backup of the same image
// takes its base snapshot's chunks as present without a request per
// chunk (rule 2a), and uploads nothing.
func TestRemoteKnownChunksCostNothing(t *testing.T) {
	eachRemote(t, 0, testRemoteKnownChunksCostNothing)
}

func testRemoteKnownChunksCostNothing(t *testing.T, rt remoteTest) {
	ctx := context.Background()
	s := rt.s
	const chunks = 128
	data := make([]byte, chunks<<16)
	for i := range data {
		data[i] = byte(i*31 + i/65536*17 + i/977)
	}
	img := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(img, data, 0o600); err != nil {
		t.Fatal(err)
	}
	backup := func(at time.Time) store.UploadTotals {
		f, err := os.Open(img)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		b, err := s.StartBackup(ctx, store.Group{Type: "vm", ID: "known"}, at)
		if err != nil {
			t.Fatal(err)
		}
		b.Sync = store.SyncNone
		var st store.UploadStats
		if err := b.AddImage(ctx, "disk.img", f, store.ImageOptions{ChunkSize: 1 << 16, Stats: &st}); err != nil {
			b.Abort()
			t.Fatal(err)
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		return st.Snapshot()
	}
	at := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	if st := backup(at); st.NewChunks != chunks {
		t.Fatalf("first backup stored %d chunks, want %d", st.NewChunks, chunks)
	}
	before := rt.requests()
	st := backup(at.Add(time.Hour))
	n := rt.requests() - before
	if st.NewChunks != 0 || st.KnownBytes != int64(len(data)) {
		t.Fatalf("second backup: %+v", st)
	}
	if n >= chunks/2 {
		t.Fatalf("second backup of %d known chunks made %d requests", chunks, n)
	}
	t.Logf("second backup of %d known chunks: %d requests", chunks, n)
}

// TestRemoteChunkCacheSymlink: a chunk cache directory replaced by a
// symbolic link is never written through; reads go to the bucket.
func TestRemoteChunkCacheSymlink(t *testing.T) { eachRemote(t, 0, testRemoteChunkCacheSymlink) }

func testRemoteChunkCacheSymlink(t *testing.T, rt remoteTest) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := rt.create(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	outside := t.TempDir()
	if err := os.Remove(filepath.Join(dir, chunkCacheDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, chunkCacheDir)); err != nil {
		t.Fatal(err)
	}
	s, err = rt.reopen(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d, blob := testBlob(t, 6, 2000)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	if b, err := s.ReadChunk(ctx, d, store.ChunkOptions{}); err != nil || string(b.Bytes()) != string(blob) {
		t.Fatalf("read: %v", err)
	}
	of(s).remote.cache.close()
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Fatalf("written through the symbolic link: %v", names)
	}
}

// TestRemoteImageChunkSize: a remote store's images take 4 MiB chunks by
// default, as each chunk costs requests.
func TestRemoteImageChunkSize(t *testing.T) { eachRemote(t, 0, testRemoteImageChunkSize) }

func testRemoteImageChunkSize(t *testing.T, rt remoteTest) {
	s := rt.s
	if got := s.ImageChunkSize(); got != 4<<20 {
		t.Fatalf("remote store's image chunk size %d, want %d", got, 4<<20)
	}
}

// sweepAfterTouch is a GC's sweep that listed key before a writer's
// touch: once key's LastModified is past was (the touch landed), it
// deletes key, ends the sweep record and releases its lease.
func sweepAfterTouch(ctx context.Context, b objstore.Objects, gc *objstore.Lease, key string, was time.Time) error {
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		oi, err := b.Head(ctx, key)
		if err != nil {
			return err
		}
		if oi.LastModified.After(was) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: never touched", key)
		}
	}
	if err := b.Delete(ctx, key); err != nil {
		return err
	}
	if _, err := b.Put(ctx, gcSweepKey, objstore.Cond{}, []byte(`{"state":"ended"}`)); err != nil {
		return err
	}
	return gc.Release(ctx)
}
