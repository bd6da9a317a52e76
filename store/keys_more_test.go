package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/index"
)

func TestEncryptedDedupBase(t *testing.T) {
	s := testStore(t)
	ka, kb := testKey(t), testKey(t)
	path, _ := markerImage(t, t.TempDir(), "base")
	g := Group{Type: TypeVM, ID: "100"}
	steps := []struct {
		key   *crypt.Key
		known bool // an earlier snapshot of the same key (or plain) is the base
	}{
		{ka, false}, {ka, true}, {kb, false}, {nil, false}, {nil, true}, {kb, true}, {kb, true},
	}
	for i, st := range steps {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.StartBackup(context.Background(), g, keyT0.Add(time.Duration(i)*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		b.Sync = SyncNone
		if st.key != nil {
			if err := b.Encrypt(st.key); err != nil {
				t.Fatal(err)
			}
		}
		_, hasBase, err := b.Reference(context.Background(), "disk.img")
		if err != nil {
			t.Fatal(err)
		}
		stats := new(UploadStats)
		err = b.AddImage(context.Background(), "disk.img", f, ImageOptions{ChunkSize: testCS, Stats: stats})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		known, err := b.KnownChunks(context.Background(), "disk.img.fidx")
		if err != nil {
			t.Fatal(err)
		}
		if hasBase != st.known || (i > 0 && !hasBase && len(known) != 0) {
			t.Errorf("step %d: base %v, want %v", i, hasBase, st.known)
		}
		tot := stats.Snapshot()
		if st.known && tot.NewChunks != 0 {
			t.Errorf("step %d: %d new chunks over a base of the same key", i, tot.NewChunks)
		}
	}
}

func TestEncryptUpdateManifestKeepsSignature(t *testing.T) {
	s := testStore(t)
	key := testKey(t)
	path, _ := markerImage(t, t.TempDir(), "upd")
	snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, key)
	err := s.UpdateManifest(context.Background(), snap, func(m *Manifest) error {
		m.SetVerifyState(VerifyState{State: "ok", UPID: "UPID:x"})
		m.Unprotected["notes"] = json.RawMessage(`"a note"`)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	raw := storedManifestJSON(t, s, snap)
	if !bytes.Contains(raw, []byte("a note")) {
		t.Fatal("update not written")
	}
	if err := key.VerifyManifest(raw); err != nil {
		t.Fatalf("signature after UpdateManifest: %v", err)
	}
	s.SetKeys(NewKeys(key))
	if _, err := readImageKey(t, s, snap); err != nil {
		t.Fatal(err)
	}
}

func TestEncryptedBlobs(t *testing.T) {
	s := testStore(t)
	key := testKey(t)
	b, err := s.StartBackup(context.Background(), Group{Type: TypeHost, ID: "h"}, keyT0)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = SyncNone
	if err := b.Encrypt(key); err != nil {
		t.Fatal(err)
	}
	if b.Key() != key {
		t.Fatal("Key")
	}
	big := bytes.Repeat([]byte("compressible secret "), 10000)
	if err := b.AddBlobData("big.blob", big); err != nil {
		t.Fatal(err)
	}
	wrapped := []byte("rsa-wrapped key config")
	if err := b.AddBlob(MasterKeyBlob, mustBlob(wrapped)); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBlobData("huge.blob", make([]byte, MaxBlobData)); !errors.Is(err, ErrBlobTooLarge) {
		t.Errorf("a blob too large once encrypted: %v", err)
	}
	if err := b.Encrypt(key); err == nil {
		t.Error("Encrypt after archives: no error")
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	snap := b.Snapshot()
	blob, _ := os.ReadFile(filepath.Join(s.SnapshotPath(snap), "big.blob"))
	if kind, _ := chunk.BlobKind(blob); kind != chunk.KindEncryptedZstd {
		t.Errorf("big.blob is %v", kind)
	}
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		if f.CryptMode != CryptEncrypt {
			t.Errorf("%s: crypt-mode %q (PBS lists every file of an encrypted backup as encrypt)", f.Filename, f.CryptMode)
		}
	}
	// the master key blob is plain: read without the key
	if got, err := s.ReadBlob(snap, m, MasterKeyBlob); err != nil || !bytes.Equal(got, wrapped) {
		t.Fatalf("master key blob without the key: %q, %v", got, err)
	}
	s.SetKeys(NewKeys(key))
	if got, err := s.ReadBlob(snap, m, "big.blob"); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("big.blob: %d bytes, %v", len(got), err)
	}
	// a blob whose tag fails: an error, no data
	blob[len(blob)-1] ^= 1
	binary.LittleEndian.PutUint32(blob[8:12], crc32.ChecksumIEEE(blob[chunk.EncryptedHeaderSize:]))
	os.WriteFile(filepath.Join(s.SnapshotPath(snap), "big.blob"), blob, 0o644)
	if err := s.UpdateManifest(context.Background(), snap, func(m *Manifest) error {
		for i := range m.Files {
			if m.Files[i].Filename == "big.blob" {
				m.Files[i].Csum = CsumHex(sha256.Sum256(blob))
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m, _ = s.ReadManifest(snap)
	if got, err := s.ReadBlob(snap, m, "big.blob"); !errors.Is(err, crypt.ErrSignature) || got != nil {
		t.Fatalf("blob listed by an unsigned change: %d bytes, %v", len(got), err)
	}
	// a plain backup takes no encrypted blob
	b2, err := s.StartBackup(context.Background(), Group{Type: TypeHost, ID: "p"}, keyT0)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Abort()
	enc, _ := chunk.EncodeEncryptedBlob(nil, []byte("x"), key, false)
	if err := b2.AddBlob("e.blob", enc); !errors.Is(err, chunk.ErrEncrypted) {
		t.Errorf("encrypted blob in a plain backup: %v", err)
	}
}

// TestEncryptedCopy copies an encrypted snapshot to another store as
// jobs/storesync does, without the key: indexes, blobs and chunks as
// they are, the source's manifest kept. The copy reads with the key and
// its signature still verifies.
func TestEncryptedCopy(t *testing.T) {
	src, dst := testStore(t), testStore(t)
	key := testKey(t)
	path, img := markerImage(t, t.TempDir(), "copy me")
	g := Group{Type: TypeVM, ID: "100"}
	snap, _ := backupKey(t, src, g, keyT0, path, key)
	m, err := src.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	b, err := dst.StartBackup(ctx, g, snap.Time)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = SyncNone
	b.SetManifestBase(m)
	for _, fi := range m.Files {
		if _, isIndex := index.Kind(fi.Filename); !isIndex {
			blob, err := src.ReadBlobFile(snap, m, fi.Filename)
			if err == nil {
				err = b.AddBlobCopy(blob, fi)
			}
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		x, err := src.OpenCheckedIndex(snap, m, fi.Filename)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < x.Len(); i++ {
			d, _, _ := x.Chunk(i)
			blob, err := os.ReadFile(src.ChunkPath(d))
			if err == nil {
				_, err = dst.InsertChunkContext(ctx, d, blob)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		err = b.AddIndexCopy(x, fi)
		x.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	if err := key.VerifyManifest(storedManifestJSON(t, dst, snap)); err != nil {
		t.Fatalf("copied manifest: %v", err)
	}
	dst.SetKeys(NewKeys(key))
	got, err := readImageKey(t, dst, snap)
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("copy read back: %d bytes, %v", len(got), err)
	}
}

// TestSignOnlySnapshot: PBS's --crypt-mode sign-only writes plain chunks
// and blobs under a signed manifest; cairn reads it with the key (plain
// digests checked) and refuses it without.
func TestSignOnlySnapshot(t *testing.T) {
	s := testStore(t)
	key := testKey(t)
	path, img := markerImage(t, t.TempDir(), "signed")
	snap, _ := backupKey(t, s, Group{Type: TypeVM, ID: "100"}, keyT0, path, nil)
	err := s.UpdateManifest(context.Background(), snap, func(m *Manifest) error {
		for i := range m.Files {
			m.Files[i].CryptMode = CryptSignOnly
		}
		return signManifest(snap, m, key)
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	if m.CryptMode() != CryptSignOnly {
		t.Fatalf("crypt mode %s", m.CryptMode())
	}
	var ke *KeyMissingError
	if _, err := readImageKey(t, s, snap); !errors.As(err, &ke) {
		t.Fatalf("sign-only without the key: %v", err)
	}
	s.SetKeys(NewKeys(key))
	got, err := readImageKey(t, s, snap)
	if err != nil || !bytes.Equal(got, img) {
		t.Fatalf("sign-only with the key: %d bytes, %v", len(got), err)
	}
	if notes, err := s.ReadBlob(snap, m, "notes.blob"); err != nil || string(notes) != "secret notes of 100" {
		t.Fatalf("sign-only blob: %q, %v", notes, err)
	}
}
