package s3store

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// condChunks is how many chunks the tests of conditional creates store.
const condChunks = 8

// TestCondPut: a server that honours If-None-Match stores each new chunk
// with one conditional PUT and no HEAD; one that refuses it (501) or
// ignores it (a write over the object, or a refusal answered as done:
// the old object stays, with its old time) is found out by the probe,
// once, told once at INFO, and has every chunk looked for first. With
// each, every chunk is stored, and a chunk stored already is kept,
// touched, not stored again: no lie turns into a chunk taken as stored
// that is not, or as fresh that is old.
func TestCondPut(t *testing.T) {
	for _, mode := range []condMode{condHonoured, condRefused, condIgnored} {
		t.Run(mode.String(), func(t *testing.T) {
			eachRemote(t, 0, func(t *testing.T, rt remoteTest) { testCondPut(t, rt, mode) })
		})
	}
}

// condServer makes rt's server treat conditional writes of chunks and
// of the probe as mode says; it counts the PUTs of chunks made with
// If-None-Match (memory only: -1 on MinIO) and what the store logs
// (memory only).
func condServer(rt remoteTest, mode condMode) (condPuts *atomic.Int64, log *bytes.Buffer) {
	condPuts, log = new(atomic.Int64), new(bytes.Buffer)
	if rt.mem == nil {
		condPuts.Store(-1)
		either := func(a, b miniotest.Lie) miniotest.Lie {
			return func(w http.ResponseWriter, r *http.Request) bool { return a(w, r) || b(w, r) }
		}
		switch mode {
		case condRefused:
			rt.proxy.SetLie(either(miniotest.RefuseIfNoneMatch(chunkDir+"/"), miniotest.RefuseIfNoneMatch(condProbePrefix)))
		case condIgnored:
			a, b := miniotest.IgnoreIfNoneMatch(chunkDir+"/"), miniotest.IgnoreIfNoneMatch(condProbePrefix)
			rt.proxy.SetAnswerLie(func(r *http.Response) error {
				if err := a(r); err != nil {
					return err
				}
				return b(r)
			})
		}
		return condPuts, log
	}
	rt.mem.SetLogger(slog.New(slog.NewTextHandler(log, nil)))
	hook := memstore.Hook(func(_ context.Context, c *memstore.Call) error {
		if c.Op == memstore.OpPut && c.Cond.IfAbsent && strings.HasPrefix(c.Key, chunkDir+"/") {
			condPuts.Add(1)
		}
		return nil
	})
	switch mode {
	case condRefused:
		hook = memstore.RefuseConds(chunkDir+"/", memstore.RefuseConds(condProbePrefix, hook))
	case condIgnored:
		hook = memstore.IgnoreConds(chunkDir+"/", memstore.IgnoreConds(condProbePrefix, hook))
	}
	rt.mem.SetHook(hook)
	return condPuts, log
}

func testCondPut(t *testing.T, rt remoteTest, mode condMode) {
	ctx := context.Background()
	s := rt.s
	condPuts, log := condServer(rt, mode)
	upload := func() *store.UploadStats {
		t.Helper()
		u := s.NewUploader(ctx, 1, nil, nil, func(chunk.Digest, int) error { return nil })
		for i := range condChunks {
			if err := u.Submit(condData(i), false); err != nil {
				t.Fatal(err)
			}
		}
		if err := u.Close(); err != nil {
			t.Fatal(err)
		}
		return u.Stats
	}
	if n := upload().NewChunks.Load(); n != condChunks {
		t.Fatalf("%d new chunks stored, want %d", n, condChunks)
	}
	if got := condMode(of(s).remote.cond.mode.Load()); got != mode {
		t.Fatalf("the probe found conditional writes %s, want %s", got, mode)
	}
	if mode == condHonoured && condPuts.Load() >= 0 && condPuts.Load() != condChunks {
		t.Errorf("%d conditional PUTs of chunks for %d new chunks", condPuts.Load(), condChunks)
	}
	if mode != condHonoured && condPuts.Load() > 0 {
		t.Errorf("%d conditional PUTs of chunks after the probe found them %s", condPuts.Load(), mode)
	}
	var before []time.Time
	for i := range condChunks {
		d := chunk.Sum(condData(i))
		b, err := s.ReadChunk(ctx, d, store.ChunkOptions{Direct: store.DirectAlways})
		if err != nil {
			t.Fatalf("chunk %d after its upload: %v", i, err)
		}
		if _, err := chunk.DecodeChunk(nil, b.Bytes(), d, len(condData(i))); err != nil {
			t.Fatalf("chunk %d after its upload: %v", i, err)
		}
		b.Release()
		info, err := rt.b.Head(ctx, chunkKey(d))
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, info.LastModified)
	}
	rt.pass(1100 * time.Millisecond) // LastModified has a second's resolution

	st := upload()
	if n := st.NewChunks.Load(); n != 0 {
		t.Errorf("%d chunks the bucket has stored as new", n)
	}
	for i := range condChunks {
		info, err := rt.b.Head(ctx, chunkKey(chunk.Sum(condData(i))))
		if err != nil {
			t.Fatal(err)
		}
		if !info.LastModified.After(before[i]) {
			t.Errorf("chunk %d stored again, not touched: LastModified %v, was %v", i, info.LastModified, before[i])
		}
	}
	if n := len(keysUnder(t, rt, condProbePrefix)); n != 0 {
		t.Errorf("%d probe objects left", n)
	}
	if rt.mem != nil {
		want := 0
		if mode != condHonoured {
			want = 1
		}
		if n := strings.Count(log.String(), "does not honour conditional writes"); n != want {
			t.Errorf("told %d times of the server's conditional writes, want %d:\n%s", n, want, log)
		}
	}
}

// condData is chunk i's data.
func condData(i int) []byte {
	data := make([]byte, 3000+i)
	for j := range data {
		data[j] = byte(j*11 + i*29 + j/97)
	}
	return data
}

func keysUnder(t *testing.T, rt remoteTest, prefix string) []string {
	t.Helper()
	var keys []string
	for info, err := range rt.b.List(context.Background(), prefix, "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, info.Key)
	}
	return keys
}

// TestCondRefusedLater: a server whose probe honoured the condition but
// that refuses it for a chunk (501) has the chunk looked for and stored
// all the same, and is told of once.
func TestCondRefusedLater(t *testing.T) {
	rt := newMemTest(t, 0)
	var log bytes.Buffer
	rt.mem.SetLogger(slog.New(slog.NewTextHandler(&log, nil)))
	rt.mem.SetHook(memstore.RefuseConds(chunkDir+"/", nil))
	u := rt.s.NewUploader(context.Background(), 2, nil, nil, func(chunk.Digest, int) error { return nil })
	for i := range condChunks {
		if err := u.Submit(condData(i), false); err != nil {
			t.Fatal(err)
		}
	}
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if n := u.Stats.NewChunks.Load(); n != condChunks {
		t.Fatalf("%d chunks stored, want %d", n, condChunks)
	}
	for i := range condChunks {
		if !rt.mem.Has(chunkKey(chunk.Sum(condData(i)))) {
			t.Fatalf("chunk %d not stored", i)
		}
	}
	if got := condMode(of(rt.s).remote.cond.mode.Load()); got != condRefused {
		t.Errorf("conditional writes %s after a refusal", got)
	}
	if n := strings.Count(log.String(), "does not honour conditional writes"); n != 1 {
		t.Errorf("told %d times, want once:\n%s", n, log.String())
	}
}

// TestCondExistingOther: a chunk a conditional create finds in the
// bucket is kept when it is the writer's object byte for byte (the
// touch's ETag) or of its size (another encoding: as a HEAD-first
// writer keeps it), and written over when its size differs (an empty
// or cut object).
func TestCondExistingOther(t *testing.T) {
	rt := newMemTest(t, 0)
	ctx := context.Background()
	rc := &remoteChunks{mirror: store.LocalBackend(rt.s.Root()), r: of(rt.s).remote}
	d, blob := testBlob(t, 7, 4000)
	for _, c := range []struct {
		name    string
		there   []byte
		existed bool
	}{
		{"same", blob, true},
		{"same size", bytes.Repeat([]byte{1}, len(blob)), true},
		{"cut", blob[:len(blob)/2], false},
		{"empty", nil, false},
	} {
		if _, err := rt.mem.Put(ctx, chunkKey(d), objstore.Cond{}, c.there); err != nil {
			t.Fatal(err)
		}
		existed, err := rc.InsertChunkParts(ctx, d, blob, nil)
		if err != nil || existed != c.existed {
			t.Errorf("%s object there: existed %v, %v; want %v", c.name, existed, err, c.existed)
		}
		want := c.there
		if !c.existed {
			want = blob
		}
		if got, _, err := rt.mem.Get(ctx, chunkKey(d), 1<<20, nil); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s object there: the bucket holds %d bytes (%v), want %d", c.name, len(got), err, len(want))
		}
	}
}
