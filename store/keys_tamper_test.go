package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
)

func TestEncryptedManifestTampered(t *testing.T) {
	ka, kb := testKey(t), testKey(t)
	path, _ := markerImage(t, t.TempDir(), "x")
	cases := []struct {
		name   string
		change func(doc map[string]any)
		want   error
	}{
		{"protected field", func(doc map[string]any) {
			doc["files"].([]any)[1].(map[string]any)["size"] = json.Number("999")
		}, crypt.ErrSignature},
		{"signature byte", func(doc map[string]any) {
			sig := []byte(doc["signature"].(string))
			sig[10] ^= 1 // still hex: '0'..'9','a'..'f' flip to another hex digit or not
			if !strings.ContainsRune("0123456789abcdef", rune(sig[10])) {
				sig[10] = '0'
			}
			if string(sig) == doc["signature"].(string) {
				sig[10] = '1'
			}
			doc["signature"] = string(sig)
		}, crypt.ErrSignature},
		{"fingerprint of another given key", func(doc map[string]any) {
			doc["unprotected"].(map[string]any)["key-fingerprint"] = kb.Fingerprint().String()
		}, crypt.ErrSignature},
		{"no signature", func(doc map[string]any) { delete(doc, "signature") }, crypt.ErrUnsigned},
		{"no fingerprint", func(doc map[string]any) {
			delete(doc["unprotected"].(map[string]any), "key-fingerprint")
		}, ErrBadManifest},
		{"crypt-mode none but signed", func(doc map[string]any) {
			for _, f := range doc["files"].([]any) {
				f.(map[string]any)["crypt-mode"] = "none"
			}
		}, crypt.ErrSignature},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0.Add(time.Duration(i)*time.Hour), path, ka)
			dec := json.NewDecoder(bytes.NewReader(storedManifestJSON(t, s, snap)))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatal(err)
			}
			tc.change(doc)
			data, _ := json.Marshal(doc)
			writeManifestJSON(t, s, snap, data)
			s.SetKeys(NewKeys(ka, kb))
			m, err := s.ReadManifest(snap)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrBadManifest) {
				t.Fatalf("got %v, want %v and ErrBadManifest", err, tc.want)
			}
			if !strings.Contains(err.Error(), filepath.Join(s.SnapshotPath(snap), ManifestName)) {
				t.Errorf("error %q does not name the manifest file", err)
			}
			if _, err := s.ReadBlob(snap, m, "notes.blob"); !errors.Is(err, tc.want) {
				t.Errorf("ReadBlob: %v", err)
			}
		})
	}
	t.Run("fingerprint not a fingerprint", func(t *testing.T) {
		s := testStore(t)
		snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, ka)
		raw := storedManifestJSON(t, s, snap)
		raw = bytes.Replace(raw, []byte(ka.Fingerprint().String()), []byte("zz:zz"), 1)
		writeManifestJSON(t, s, snap, raw)
		_, err := s.ReadManifest(snap)
		if !errors.Is(err, ErrBadManifest) || !strings.Contains(err.Error(), ManifestName) {
			t.Fatalf("got %v", err)
		}
	})
}

// flipChunk changes bit 0 of byte off of chunk d's file; with fixCRC the
// blob's CRC is made to match again (the tag alone must catch it).
func flipChunk(t *testing.T, s *Store, d chunk.Digest, off int, fixCRC bool) {
	t.Helper()
	p := s.ChunkPath(d)
	blob, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	blob[off] ^= 1
	if fixCRC {
		binary.LittleEndian.PutUint32(blob[8:12], crc32.ChecksumIEEE(blob[chunk.EncryptedHeaderSize:]))
	}
	if err := os.WriteFile(p, blob, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestEncryptedChunkTampered(t *testing.T) {
	key := testKey(t)
	path, _ := markerImage(t, t.TempDir(), "tamper")
	cases := []struct {
		name   string
		off    int
		fixCRC bool
		want   error
	}{
		{"ciphertext, CRC fixed", chunk.EncryptedHeaderSize + 5, true, chunk.ErrAuth},
		{"ciphertext", chunk.EncryptedHeaderSize + 5, false, chunk.ErrAuth}, // a read checks the tag, not the CRC
		{"IV", chunk.BlobHeaderSize + 3, false, chunk.ErrAuth},
		{"tag", chunk.BlobHeaderSize + crypt.IVSize + 3, false, chunk.ErrAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, key)
			s.SetKeys(NewKeys(key))
			x, err := s.OpenIndexFile(snap, "disk.img.fidx")
			if err != nil {
				t.Fatal(err)
			}
			d, _, _ := x.Chunk(0)
			x.Close()
			flipChunk(t, s, d, tc.off, tc.fixCRC)
			got, err := readImageKey(t, s, snap)
			var re *chunkcache.ReadError
			if !errors.Is(err, tc.want) || !errors.Is(err, ErrCorruptChunk) || !errors.As(err, &re) || re.Digest != d.String() {
				t.Fatalf("read: %v, want %v naming chunk %s", err, tc.want, d)
			}
			if len(got) != 0 {
				t.Fatalf("%d bytes returned with a failed chunk 0", len(got))
			}
		})
	}
}

// TestEncryptedChunkSwapped: another chunk of the same key in the place
// of chunk 0 (its tag verifies) fails the keyed digest; no data.
func TestEncryptedChunkSwapped(t *testing.T) {
	s := testStore(t)
	key := testKey(t)
	path, _ := markerImage(t, t.TempDir(), "swap")
	snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, key)
	s.SetKeys(NewKeys(key))
	x, err := s.OpenIndexFile(snap, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	d0, _, _ := x.Chunk(0)
	d1, _, _ := x.Chunk(1)
	x.Close()
	other, err := os.ReadFile(s.ChunkPath(d1))
	if err != nil || d0 == d1 {
		t.Fatalf("chunks 0 and 1: %v", err)
	}
	if err := os.WriteFile(s.ChunkPath(d0), other, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readImageKey(t, s, snap)
	if !errors.Is(err, chunk.ErrDigest) || !errors.Is(err, ErrCorruptChunk) || len(got) != 0 {
		t.Fatalf("swapped chunk: %d bytes, %v", len(got), err)
	}
}

// TestParseManifestSignature: a manifest parsed from its blob bytes (as
// tape restore does) is checked over those bytes; a JSON value changed
// in them is caught.
func TestParseManifestSignature(t *testing.T) {
	s := testStore(t)
	key := testKey(t)
	path, _ := markerImage(t, t.TempDir(), "tape")
	snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, key)
	blob, err := os.ReadFile(filepath.Join(s.SnapshotPath(snap), ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	s.SetKeys(NewKeys(key))
	m, err := ParseManifest("tape:x", blob, snap)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := s.SnapshotKey(snap, m); err != nil || k != key {
		t.Fatalf("SnapshotKey: %v", err)
	}
	raw := bytes.Replace(storedManifestJSON(t, s, snap), []byte(`"disk.img.fidx"`), []byte(`"disk.img.fidy"`), 1)
	bad, _ := chunk.EncodeBlob(nil, raw, false)
	m, err = ParseManifest("tape:x", bad, snap)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SnapshotKey(snap, m); !errors.Is(err, crypt.ErrSignature) {
		t.Fatalf("changed manifest: %v", err)
	}
}

// TestCacheKeepsKeysApart: chunks decrypted for a reader with the key are
// never served from the shared cache to a plain snapshot whose index
// lists the same digests (a hostile one, say), nor to another key's.
func TestCacheKeepsKeysApart(t *testing.T) {
	s := testStore(t)
	key, other := testKey(t), testKey(t)
	path, _ := markerImage(t, t.TempDir(), "apart")
	snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, key)
	s.SetKeys(NewKeys(key))
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	c, err := NewCache(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := chunkcache.NewReader(context.Background(), x, c, 0).WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
	// a plain snapshot listing the encrypted chunks
	b, err := s.StartBackup(context.Background(), Group{Type: TypeVM, ID: "hostile"}, keyT0)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = SyncNone
	fw, err := index.NewFixedWriter(filepath.Join(b.Dir(), "disk.img.fidx"), testCS)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < x.Len(); i++ {
		d, start, end := x.Chunk(i)
		fw.Add(d, int(end-start))
	}
	csum, size, err := fw.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddFile(FileInfo{Filename: "disk.img.fidx", Size: uint64(size), Csum: CsumHex(csum)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	hm, err := s.ReadManifest(b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	hx, err := s.OpenSnapshotIndex(b.Snapshot(), hm, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer hx.Close()
	if chunkcache.IndexKey(hx) != nil {
		t.Fatal("a plain snapshot's index has a key")
	}
	buf := make([]byte, 4096)
	if n, err := chunkcache.NewReader(context.Background(), hx, c, 0).ReadAt(buf, 0); !errors.Is(err, ErrCorruptChunk) || n != 0 {
		t.Fatalf("plain read of cached encrypted chunks: %d bytes, %v", n, err)
	}
	d, start, end := x.Chunk(0)
	if data, err := c.GetKey(context.Background(), other, d, int(end-start)); !errors.Is(err, chunk.ErrAuth) || data != nil {
		t.Fatalf("another key's read of a cached chunk: %d bytes, %v", len(data), err)
	}
}
