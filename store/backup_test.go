package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
)

const testCS = 64 << 10

// makeImage writes a sparse test image: data, a hole, a repeated chunk,
// an explicit zero chunk and a short tail. It returns its path and bytes.
func makeImage(t testing.TB, dir string, seed uint64) (string, []byte) {
	t.Helper()
	img := make([]byte, 20*testCS+1234)
	copy(img, randBytes(3*testCS, seed))              // chunks 0-2 data
	copy(img[8*testCS:], img[:testCS])                // chunk 8 repeats chunk 0
	copy(img[9*testCS+100:], randBytes(5000, seed+1)) // chunk 9 partly data
	copy(img[20*testCS:], randBytes(1234, seed+2))    // short tail
	path := filepath.Join(dir, "disk.raw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// write only the non-zero regions so the rest stays a hole
	for _, r := range [][2]int{{0, 3 * testCS}, {8 * testCS, 10 * testCS}, {20 * testCS, len(img)}} {
		if _, err := f.WriteAt(img[r[0]:r[1]], int64(r[0])); err != nil {
			t.Fatal(err)
		}
	}
	f.WriteAt(make([]byte, testCS), 12*testCS) // explicit zeros, not a hole
	return path, img
}

// backupImage backs the image at path up as g's snapshot at at, in
// chunks of testCS bytes, with a blob beside it.
func backupImage(t testing.TB, s *Store, g Group, at time.Time, path string) (Snapshot, UploadTotals) {
	t.Helper()
	return backupImageSized(t, s, g, at, path, testCS)
}

// backupImageSized is backupImage with chunks of size bytes.
func backupImageSized(t testing.TB, s *Store, g Group, at time.Time, path string, size int) (Snapshot, UploadTotals) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := s.StartBackup(context.Background(), g, at)
	if err != nil {
		t.Fatal(err)
	}
	stats := new(UploadStats)
	if err := b.AddImage(context.Background(), "disk.img", f, ImageOptions{ChunkSize: size, Stats: stats}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if err := b.AddBlob("notes.blob", mustBlob([]byte("hello"))); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot(), stats.Snapshot()
}

func mustBlob(data []byte) []byte {
	b, err := chunk.EncodeBlob(nil, data, true)
	if err != nil {
		panic(err)
	}
	return b
}

func openImage(t testing.TB, s *Store, snap Snapshot, c *chunkcache.Cache) *chunkcache.Reader {
	t.Helper()
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return chunkcache.NewReader(context.Background(), x, c, 4)
}

func TestImageBackupRoundTrip(t *testing.T) {
	s := testStore(t)
	path, img := makeImage(t, t.TempDir(), 10)
	g := Group{Type: TypeVM, ID: "roundtrip"}
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	snap, st := backupImage(t, s, g, t0, path)
	if st.Bytes != int64(len(img)) || st.Chunks != 21 {
		t.Fatalf("stats %+v", st)
	}
	if st.ZeroBytes != 15*testCS { // chunks 3-7 and 10-19 (12 is written zeros, the rest holes)
		t.Fatalf("zero bytes %d, want %d", st.ZeroBytes, 15*testCS)
	}
	c, _ := NewCache(s, 8<<20)
	defer c.Close()
	r := openImage(t, s, snap, c)
	var buf bytes.Buffer
	if _, err := r.WriteTo(&buf); err != nil || !bytes.Equal(buf.Bytes(), img) {
		t.Fatalf("WriteTo: err %v equal %v", err, bytes.Equal(buf.Bytes(), img))
	}
	got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("ReadAt: err %v equal %v", err, bytes.Equal(got, img))
	}
	// odd ranges across chunk borders
	for _, rg := range [][2]int{{testCS - 1, 2}, {5, 3 * testCS}, {len(img) - 10, 10}, {len(img) - 10, 100}} {
		p := make([]byte, rg[1])
		n, err := r.ReadAt(p, int64(rg[0]))
		want := img[rg[0]:min(rg[0]+rg[1], len(img))]
		if !bytes.Equal(p[:n], want) || (n < len(p) && err != io.EOF) {
			t.Fatalf("range %v: n %d err %v", rg, n, err)
		}
	}
	// a second backup of the same data writes nothing new
	_, st2 := backupImage(t, s, g, t0.Add(time.Hour), path)
	if st2.NewChunks != 0 || st2.Bytes != st.Bytes {
		t.Fatalf("second backup stats %+v", st2)
	}
	if latest, _ := s.Latest(g); !latest.Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("latest %v", latest)
	}
}

func TestCorruptAndMissingChunk(t *testing.T) {
	s := testStore(t)
	path, img := makeImage(t, t.TempDir(), 20)
	snap, _ := backupImage(t, s, Group{Type: TypeVM, ID: "corrupt"}, time.Date(2024, 5, 2, 0, 0, 0, 0, time.UTC), path)
	c, _ := NewCache(s, 8<<20)
	defer c.Close()
	r := openImage(t, s, snap, c)
	d1, _, _ := r.Index().Chunk(1)
	d2, _, _ := r.Index().Chunk(2)
	cp := s.ChunkPath(d1)
	blob, _ := os.ReadFile(cp)
	blob[len(blob)/2] ^= 0x01
	os.WriteFile(cp, blob, 0o644)
	os.Rename(s.ChunkPath(d2), s.ChunkPath(d2)+".moved")
	defer os.Rename(s.ChunkPath(d2)+".moved", s.ChunkPath(d2))

	p := make([]byte, 100)
	if _, err := r.ReadAt(p, testCS+10); !errors.Is(err, ErrCorruptChunk) || !errors.Is(err, chunk.ErrDigest) {
		t.Fatalf("corrupt chunk: %v", err)
	}
	var cre *chunkcache.ReadError
	if _, err := r.ReadAt(p, 2*testCS); !errors.As(err, &cre) || !errors.Is(err, ErrMissingChunk) || cre.Digest != d2.String() {
		t.Fatalf("missing chunk: %v", err)
	}
	// the chunks around still read
	for _, off := range []int64{0, testCS - 100, 3 * testCS, 8 * testCS} {
		n, err := r.ReadAt(p, off)
		if err != nil || !bytes.Equal(p[:n], img[off:off+100]) {
			t.Fatalf("read at %d: %v", off, err)
		}
	}
}

func TestConcurrentReaders(t *testing.T) {
	s := testStore(t)
	path, img := makeImage(t, t.TempDir(), 30)
	snap, _ := backupImage(t, s, Group{Type: TypeVM, ID: "concurrent"}, time.Date(2024, 5, 3, 0, 0, 0, 0, time.UTC), path)
	c, _ := NewCache(s, 1<<20) // smaller than the image: evictions happen
	defer c.Close()
	r := openImage(t, s, snap, c)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			p := make([]byte, 7000+g*100)
			for off := int64(g * 333); off < int64(len(img)); off += int64(len(p)) {
				n, err := r.ReadAt(p, off)
				if err != nil && err != io.EOF {
					errs <- err
					return
				}
				if !bytes.Equal(p[:n], img[off:off+int64(n)]) {
					errs <- errors.New("data mismatch")
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestUnfinishedAndLocks(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeHost, ID: "unfinished"}
	path, _ := makeImage(t, t.TempDir(), 40)
	good, _ := backupImage(t, s, g, time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC), path)

	b, err := s.StartBackup(ctx, g, time.Date(2024, 6, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartBackup(ctx, g, time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrLocked) {
		t.Fatalf("second backup of a group: %v", err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	if err := b.AddImage(ctx, "disk.img", f, ImageOptions{ChunkSize: testCS}); err != nil {
		t.Fatal(err)
	}
	b.unlock() // as if the process died here: no manifest
	snaps, _ := s.Snapshots(g)
	if len(snaps) != 2 || !snaps[0].Finished || snaps[1].Finished {
		t.Fatalf("snapshots %+v", snaps)
	}
	if l, _ := s.Latest(g); !l.Time.Equal(good.Time) {
		t.Fatalf("latest is the unfinished one: %v", l)
	}
	r, _ := ParseRef(snaps[1].String())
	if _, err := s.Resolve(r); !errors.Is(err, ErrUnfinished) {
		t.Fatalf("resolve unfinished: %v", err)
	}
	// the next backup works
	backupImage(t, s, g, time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC), path)
	if _, err := s.StartBackup(ctx, g, time.Date(2024, 6, 3, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrExists) {
		t.Fatalf("same time twice: %v", err)
	}
}

func TestManifestBad(t *testing.T) {
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 50)
	snap, _ := backupImage(t, s, Group{Type: TypeCT, ID: "manifest"}, time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC), path)
	mpath := filepath.Join(s.SnapshotPath(snap), ManifestName)
	orig, _ := os.ReadFile(mpath)
	defer os.WriteFile(mpath, orig, 0o644)
	cases := map[string][]byte{
		"flipped":  append(append([]byte{}, orig[:20]...), append([]byte{orig[20] ^ 1}, orig[21:]...)...),
		"not-json": mustBlob([]byte("{nope")),
		"other-id": mustBlob([]byte(`{"backup-type":"ct","backup-id":"other","backup-time":1719792000,"files":[]}`)),
		"bad-name": mustBlob([]byte(`{"backup-type":"ct","backup-id":"manifest","backup-time":1719792000,"files":[{"filename":"../x","crypt-mode":"none","size":1,"csum":"00"}]}`)),
		"empty":    nil,
	}
	for name, data := range cases {
		os.WriteFile(mpath, data, 0o644)
		_, err := s.ReadManifest(snap)
		if !errors.Is(err, ErrBadManifest) || !contains(err.Error(), mpath) {
			t.Errorf("%s: %v", name, err)
		}
	}
	os.WriteFile(mpath, orig, 0o644)
	if err := s.UpdateManifest(context.Background(), snap, func(m *Manifest) error {
		m.SetVerifyState(VerifyState{State: "ok", UPID: "job-1"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadManifest(snap)
	if vs, ok := m.VerifyState(); err != nil || !ok || vs.State != "ok" || vs.UPID != "job-1" {
		t.Fatalf("verify state %+v %v", vs, err)
	}
	if blob, err := s.ReadBlob(snap, m, "notes.blob"); err != nil || string(blob) != "hello" {
		t.Fatalf("blob %q %v", blob, err)
	}
}

func BenchmarkIndexReaderWriteTo(b *testing.B) {
	s := testStore(b)
	dir := b.TempDir()
	path := filepath.Join(dir, "rand.img")
	os.WriteFile(path, randBytes(64<<20, 60), 0o644)
	f, _ := os.Open(path)
	defer f.Close()
	bk, err := s.StartBackup(context.Background(), Group{Type: TypeVM, ID: "bench"}, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	bk.Sync = SyncNone
	if err := bk.AddImage(context.Background(), "disk.img", f, ImageOptions{ChunkSize: chunk.DefaultChunkSize}); err != nil {
		b.Fatal(err)
	}
	bk.Finish()
	c, _ := NewCache(s, 16<<20) // smaller than the image: every pass loads
	defer c.Close()
	r := openImage(b, s, bk.Snapshot(), c)
	b.SetBytes(r.Size())
	for b.Loop() {
		r.WriteTo(io.Discard)
	}
}

func TestManifestKeepsUnknownFields(t *testing.T) {
	in := `{"backup-type":"vm","backup-id":"1","backup-time":5,"files":[],"unprotected":{"notes":"n","x":1},"key-fingerprint":"ab:cd","signature":"sig"}`
	var m Manifest
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatal(err)
	}
	m.SetVerifyState(VerifyState{State: "ok", UPID: "u"})
	out, err := json.Marshal(&m)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	json.Unmarshal(out, &back)
	unp, _ := back["unprotected"].(map[string]any)
	if back["key-fingerprint"] != "ab:cd" || back["signature"] != "sig" || unp["notes"] != "n" || unp["verify_state"] == nil {
		t.Fatalf("lost fields: %s", out)
	}
}

// TestImageChunkSizeDefault: an image backed up without a chunk size
// takes the store's (256 KiB in a local store), a later backup of the
// group keeps the size of its previous snapshot's image (else every chunk
// would be new), and a size given wins.
func TestImageChunkSizeDefault(t *testing.T) {
	s := testStore(t)
	if got := s.ImageChunkSize(); got != 256<<10 {
		t.Fatalf("local store's image chunk size %d, want %d", got, 256<<10)
	}
	path, _ := makeImage(t, t.TempDir(), 11)
	t0 := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	chunkSize := func(snap Snapshot) int64 {
		t.Helper()
		x, err := s.OpenIndexFile(snap, "disk.img.fidx")
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		return x.(*index.Fixed).ChunkSize()
	}
	for i, c := range []struct {
		group      string
		given      int
		want       int64
		newChunks0 bool // the backup stores no new chunk
	}{
		{"fresh", 0, DefaultImageChunkSize, false},
		{"fresh", 0, DefaultImageChunkSize, true},
		{"sized", 1 << 20, 1 << 20, false},
		{"sized", 0, 1 << 20, true}, // kept from the previous snapshot
		{"sized", 128 << 10, 128 << 10, false},
		{"sized", 0, 128 << 10, true},
	} {
		snap, st := backupImageSized(t, s, Group{Type: TypeVM, ID: c.group}, t0.Add(time.Duration(i)*time.Hour), path, c.given)
		if got := chunkSize(snap); got != c.want {
			t.Errorf("backup %d (%s, --chunk-size %d): chunk size %d, want %d", i, c.group, c.given, got, c.want)
		}
		if (st.NewChunks == 0) != c.newChunks0 {
			t.Errorf("backup %d (%s, --chunk-size %d): %d new chunks", i, c.group, c.given, st.NewChunks)
		}
	}
}

func contains(s, sub string) bool {
	return len(sub) == 0 || (len(s) >= len(sub) && (s[:len(sub)] == sub || contains(s[1:], sub)))
}
