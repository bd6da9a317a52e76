package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/chunkcache"
)

var keyT0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func testKey(t testing.TB) *crypt.Key {
	t.Helper()
	k, err := crypt.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Wipe)
	return k
}

// markerImage is an image whose data chunks hold a marker string many
// times (compressible, as real data is), a hole and explicit zeros.
func markerImage(t testing.TB, dir, marker string) (string, []byte) {
	t.Helper()
	img := make([]byte, 12*testCS+777)
	for off := 0; off+len(marker) <= 4*testCS; off += len(marker) + 17 {
		copy(img[off:], marker)
	}
	copy(img[4*testCS:], randBytes(2*testCS, 7))
	copy(img[10*testCS:], bytes.Repeat([]byte(marker), 2*testCS/len(marker)))
	copy(img[12*testCS:], marker)
	path := filepath.Join(dir, "marker.raw")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range [][2]int{{0, 6 * testCS}, {10 * testCS, len(img)}} {
		if _, err := f.WriteAt(img[r[0]:r[1]], int64(r[0])); err != nil {
			t.Fatal(err)
		}
	}
	f.WriteAt(make([]byte, testCS), 8*testCS) // explicit zeros; 6, 7 and 9 are holes
	return path, img
}

// backupKey backs the image at path up into g at at, encrypted with key
// (nil: plain), with a blob beside it.
func backupKey(t testing.TB, s *Store, g Group, at time.Time, path string, key *crypt.Key) (Snapshot, UploadTotals) {
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
	b.Sync = SyncNone
	if key != nil {
		if err := b.Encrypt(key); err != nil {
			t.Fatal(err)
		}
	}
	stats := new(UploadStats)
	if err := b.AddImage(context.Background(), "disk.img", f, ImageOptions{ChunkSize: testCS, Stats: stats}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if err := b.AddBlobData("notes.blob", []byte("secret notes of "+g.ID)); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot(), stats.Snapshot()
}

// readImageKey reads the snapshot's disk.img through a fresh cache.
func readImageKey(t testing.TB, s *Store, snap Snapshot) ([]byte, error) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	if err != nil {
		return nil, err
	}
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	if err != nil {
		return nil, err
	}
	defer x.Close()
	c, err := NewCache(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out bytes.Buffer
	_, err = chunkcache.NewReader(context.Background(), x, c, 2).WriteTo(&out)
	return out.Bytes(), err
}

// storedManifestJSON is the JSON of snap's manifest file as stored.
func storedManifestJSON(t testing.TB, s *Store, snap Snapshot) []byte {
	t.Helper()
	blob, err := os.ReadFile(filepath.Join(s.SnapshotPath(snap), ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	data, err := chunk.DecodeBlob(nil, blob, 0)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeManifestJSON(t testing.TB, s *Store, snap Snapshot, data []byte) {
	t.Helper()
	blob, err := chunk.EncodeBlob(nil, data, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.SnapshotPath(snap), ManifestName), blob, 0o644); err != nil {
		t.Fatal(err)
	}
}

func indexDigests(t testing.TB, s *Store, snap Snapshot) map[chunk.Digest]bool {
	t.Helper()
	x, err := s.OpenIndexFile(snap, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	set := map[chunk.Digest]bool{}
	for i := 0; i < x.Len(); i++ {
		d, _, _ := x.Chunk(i)
		set[d] = true
	}
	return set
}

func TestEncryptedImageRoundTrip(t *testing.T) {
	s := testStore(t)
	key := testKey(t)
	const marker = "PLAINTEXT-MARKER-a8f3"
	path, img := markerImage(t, t.TempDir(), marker)
	g := Group{Type: TypeVM, ID: "100"}
	snap, st := backupKey(t, s, g, keyT0, path, key)
	if st.ZeroBytes != 4*testCS {
		t.Errorf("zero bytes %d, want %d", st.ZeroBytes, 4*testCS)
	}

	s.SetKeys(NewKeys(key))
	got, err := readImageKey(t, s, snap)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, img) {
		t.Fatal("encrypted image read back differs")
	}
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	notes, err := s.ReadBlob(snap, m, "notes.blob")
	if err != nil || string(notes) != "secret notes of 100" {
		t.Fatalf("notes blob: %q, %v", notes, err)
	}
	for _, f := range m.Files {
		if f.CryptMode != CryptEncrypt {
			t.Errorf("%s: crypt-mode %q", f.Filename, f.CryptMode)
		}
	}
	// the manifest names the key and its signature verifies, checked with
	// crypt alone over the stored JSON
	raw := storedManifestJSON(t, s, snap)
	var doc struct {
		Signature   string            `json:"signature"`
		Unprotected map[string]any    `json:"unprotected"`
		Files       []json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Unprotected["key-fingerprint"] != key.Fingerprint().String() || len(doc.Signature) != 64 {
		t.Fatalf("manifest fingerprint %v signature %q", doc.Unprotected["key-fingerprint"], doc.Signature)
	}
	if err := key.VerifyManifest(raw); err != nil {
		t.Fatalf("crypt.VerifyManifest of the stored manifest: %v", err)
	}
	// no chunk file and no blob holds the plaintext
	checkNoPlaintext(t, s.Root(), marker)
	// every chunk of the index is an encrypted blob
	for d := range indexDigests(t, s, snap) {
		blob, err := os.ReadFile(s.ChunkPath(d))
		if err != nil {
			t.Fatal(err)
		}
		if kind, err := chunk.BlobKind(blob); err != nil || !kind.Encrypted() {
			t.Errorf("chunk %s: kind %v, %v", d, kind, err)
		}
	}
	// verify, gc, sync and tape open indexes without a key
	s.SetKeys(nil)
	x, err := s.OpenCheckedIndex(snap, m, "disk.img.fidx")
	if err != nil {
		t.Fatalf("OpenCheckedIndex without the key: %v", err)
	}
	x.Close()
	if _, err := s.ReadBlobFile(snap, m, "notes.blob"); err != nil {
		t.Fatalf("ReadBlobFile without the key: %v", err)
	}
}

// checkNoPlaintext fails when any file under root holds marker.
func checkNoPlaintext(t *testing.T, root, marker string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(p))), ".chunks") {
			n++
		}
		if bytes.Contains(data, []byte(marker)) || bytes.Contains(data, []byte("secret notes")) {
			t.Errorf("%s holds plaintext", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no chunk files looked at")
	}
}

func TestEncryptedChunkSetsDisjoint(t *testing.T) {
	s := testStore(t)
	ka, kb := testKey(t), testKey(t)
	path, _ := markerImage(t, t.TempDir(), "same data")
	sets := map[string]map[chunk.Digest]bool{}
	for name, k := range map[string]*crypt.Key{"plain": nil, "A": ka, "B": kb} {
		snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: name}, keyT0, path, k)
		sets[name] = indexDigests(t, s, snap)
	}
	for _, pair := range [][2]string{{"plain", "A"}, {"plain", "B"}, {"A", "B"}} {
		for d := range sets[pair[0]] {
			if sets[pair[1]][d] {
				t.Errorf("%s and %s share chunk %s", pair[0], pair[1], d)
			}
		}
	}
	if len(sets["A"]) != len(sets["plain"]) || len(sets["B"]) != len(sets["plain"]) {
		t.Errorf("distinct chunks: plain %d, A %d, B %d", len(sets["plain"]), len(sets["A"]), len(sets["B"]))
	}
	if sets["plain"][chunk.ZeroDigest(testCS)] == false || sets["A"][ka.Digest(make([]byte, testCS))] == false {
		t.Error("the zero chunks are not the plain and keyed digests of zeros")
	}
}

func TestEncryptedKeyMissing(t *testing.T) {
	s := testStore(t)
	key, other := testKey(t), testKey(t)
	path, _ := markerImage(t, t.TempDir(), "x")
	snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, key)
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, keys := range []*Keys{nil, NewKeys(other)} {
		s.SetKeys(keys)
		var ke *KeyMissingError
		_, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
		if !errors.As(err, &ke) || !errors.Is(err, ErrKeyMissing) || ke.Fingerprint != key.Fingerprint() {
			t.Fatalf("OpenSnapshotIndex without the key: %v", err)
		}
		if msg := err.Error(); !strings.Contains(msg, snap.String()) || !strings.Contains(msg, key.Fingerprint().Short()) {
			t.Errorf("error %q names neither snapshot nor fingerprint", msg)
		}
		if _, err := s.ReadBlob(snap, m, "notes.blob"); !errors.As(err, &ke) {
			t.Errorf("ReadBlob without the key: %v", err)
		}
	}
	// a plain reader asking for an encrypted chunk gets no data
	c, _ := NewCache(s, 0)
	defer c.Close()
	x, err := s.OpenIndexFile(snap, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	d, start, end := x.Chunk(0)
	if data, err := c.Get(context.Background(), d, int(end-start)); err == nil || !errors.Is(err, ErrCorruptChunk) {
		t.Errorf("plain Get of an encrypted chunk: %d bytes, %v", len(data), err)
	}
}
