package store

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// A manifest or snapshot blob larger than it may be fails naming the
// file, before its content is read.
func TestOversizedFilesFailBeforeReading(t *testing.T) {
	s := testStore(t)
	snap := Snapshot{Group: Group{Type: TypeHost, ID: "big"}, Time: time.Unix(1700000000, 0).UTC()}
	dir := s.SnapshotPath(snap)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sparse := func(name string, size int64) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	path := sparse(ManifestName, 1<<30)
	if _, err := s.ReadManifest(snap); !errors.Is(err, ErrBadManifest) || !strings.Contains(err.Error(), path) {
		t.Fatalf("1 GiB manifest: %v", err)
	}
	m := &Manifest{BackupType: "host", BackupID: "big", BackupTime: 1700000000,
		Files: []FileInfo{{Filename: "a.blob", Size: 100, Csum: CsumHex([32]byte{})},
			{Filename: "b.blob", Size: 1 << 40, Csum: CsumHex([32]byte{})}}}
	path = sparse("a.blob", 1<<30)
	if _, err := s.ReadBlob(snap, m, "a.blob"); !errors.Is(err, ErrCorruptChunk) || !strings.Contains(err.Error(), path) {
		t.Fatalf("blob larger than its manifest entry: %v", err)
	}
	path = sparse("b.blob", 1<<30)
	if _, err := s.ReadBlob(snap, m, "b.blob"); !errors.Is(err, ErrCorruptChunk) || !strings.Contains(err.Error(), path) {
		t.Fatalf("blob whose manifest entry is larger than a blob: %v", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("reading oversized files allocated %d bytes", grew)
	}
	if _, err := ReadFileBounded(filepath.Join(dir, "missing"), 10); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// A manifest naming a file twice is refused.
func TestManifestDuplicateFile(t *testing.T) {
	snap := Snapshot{Group: Group{Type: TypeHost, ID: "h"}, Time: time.Unix(1700000000, 0).UTC()}
	js := `{"backup-type":"host","backup-id":"h","backup-time":1700000000,"files":[` +
		`{"filename":"a.blob","crypt-mode":"none","size":1,"csum":"` + strings.Repeat("0", 64) + `"},` +
		`{"filename":"a.blob","crypt-mode":"none","size":2,"csum":"` + strings.Repeat("1", 64) + `"}]}`
	if _, err := decodeManifest("m", mustBlob([]byte(js)), snap); !errors.Is(err, ErrBadManifest) || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("got %v", err)
	}
}
