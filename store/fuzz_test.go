package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
)

// Every truncation of a manifest blob fails as a bad manifest.
func TestManifestTruncatedEverywhere(t *testing.T) {
	snap := Snapshot{Group: Group{Type: TypeHost, ID: "h"}, Time: time.Unix(1700000000, 0).UTC()}
	js := []byte(`{"backup-type":"host","backup-id":"h","backup-time":1700000000,"files":[],"unprotected":{}}`)
	for _, compress := range []bool{false, true} {
		blob, err := chunk.EncodeBlob(nil, js, compress)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := decodeManifest("m", blob, snap); err != nil {
			t.Fatalf("whole manifest: %v", err)
		}
		for n := 0; n < len(blob); n++ {
			if _, err := decodeManifest("m", blob[:n], snap); !errors.Is(err, ErrBadManifest) {
				t.Fatalf("manifest cut to %d of %d bytes: %v", n, len(blob), err)
			}
		}
	}
}

// FuzzManifest decodes arbitrary manifest blobs and arbitrary JSON in a
// valid blob: only ErrBadManifest, and what decodes writes back to the
// same manifest.
func FuzzManifest(f *testing.F) {
	snap := Snapshot{Group: Group{Type: TypeHost, ID: "h1"}, Time: time.Unix(1700000000, 0).UTC()}
	m := &Manifest{BackupType: "host", BackupID: "h1", BackupTime: 1700000000,
		Files: []FileInfo{{Filename: "root.pxar.didx", CryptMode: "none", Size: 123, Csum: CsumHex([32]byte{1})},
			{Filename: "catalog.pcat1.didx", CryptMode: "none", Size: 9, Csum: CsumHex([32]byte{2})}},
		Unprotected: map[string]json.RawMessage{"verify_state": json.RawMessage(`{"state":"ok","upid":"u"}`)},
		Extra:       map[string]json.RawMessage{"key-fingerprint": json.RawMessage(`"ab:cd"`)}}
	js, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		f.Fatal(err)
	}
	for _, compress := range []bool{true, false} {
		blob, err := chunk.EncodeBlob(nil, js, compress)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(blob)
	}
	f.Add(js)
	s, key := fuzzKeyStore(f)
	m.Files[0].CryptMode = CryptEncrypt
	if err := signManifest(snap, m, key); err != nil {
		f.Fatal(err)
	}
	signed, _ := json.MarshalIndent(m, "", "  ")
	f.Add(plainBlob(nil, signed))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, blob := range [][]byte{data, plainBlob(t, data)} {
			m, err := decodeManifest("index.json.blob", blob, snap)
			if err != nil {
				if !errors.Is(err, ErrBadManifest) {
					t.Fatalf("error %v", err)
				}
				continue
			}
			k, err := s.SnapshotKey(snap, m)
			if err != nil && !errors.Is(err, ErrBadManifest) && !errors.Is(err, ErrKeyMissing) {
				t.Fatalf("SnapshotKey: %v", err)
			}
			if k != nil && k != key {
				t.Fatal("SnapshotKey: a key the store was not given")
			}
			again, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			m2, err := decodeManifest("again", plainBlob(t, again), snap)
			if err != nil {
				t.Fatalf("re-encoded manifest fails: %v", err)
			}
			if again2, _ := json.Marshal(m2); !bytes.Equal(again, again2) {
				t.Fatalf("round trip changed the manifest:\n%s\n%s", again, again2)
			}
		}
	})
}

// fuzzKeyStore is a store holding one fixed key.
func fuzzKeyStore(f *testing.F) (*Store, *crypt.Key) {
	key, err := crypt.NewKey(bytes.Repeat([]byte{7}, crypt.KeySize))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(key.Wipe)
	s := testStore(f)
	s.SetKeys(NewKeys(key))
	return s, key
}

// plainBlob wraps data in an uncompressed blob (nil if too large).
func plainBlob(t *testing.T, data []byte) []byte {
	blob, err := chunk.EncodeBlob(nil, data, false)
	if err != nil {
		if errors.Is(err, chunk.ErrTooLarge) {
			return nil
		}
		t.Fatal(err)
	}
	return blob
}

// FuzzSnapshotRef parses arbitrary snapshot references and namespace
// names: only ErrBadName, a parsed reference is valid and prints back to
// itself.
func FuzzSnapshotRef(f *testing.F) {
	for _, s := range []string{"host/h1", "vm/100/latest", "ct/7/2024-01-02T03:04:05Z",
		"ns/prod/ns/db/host/h1/2024-01-02T03:04:05Z", "ns/a/vm/1", "/host/x/", "host/../2024-01-02T03:04:05Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if err := NS(s).Check(); err == nil {
			for _, p := range NS(s).Parts() {
				if p == "" || p == "." || p == ".." || bytes.ContainsAny([]byte(p), "/\x00") {
					t.Fatalf("namespace %q accepted with component %q", s, p)
				}
			}
		} else if !errors.Is(err, ErrBadName) {
			t.Fatalf("namespace %q: %v", s, err)
		}
		r, err := ParseRef(s)
		if err != nil {
			if !errors.Is(err, ErrBadName) {
				t.Fatalf("ref %q: %v", s, err)
			}
			return
		}
		if err := r.Group.Check(); err != nil {
			t.Fatalf("ref %q parsed to an invalid group: %v", s, err)
		}
		if r.Latest {
			return
		}
		back, err := ParseRef(r.String())
		if err != nil || back != r {
			t.Fatalf("ref %q printed as %q parses to %+v, %v", s, r.String(), back, err)
		}
	})
}
