package filearchive

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
)

func genKey(t *testing.T) *crypt.Key {
	t.Helper()
	k, err := crypt.GenerateKey()
	must(t, err)
	t.Cleanup(k.Wipe)
	return k
}

// snapshotChunks returns the chunks every index of snap lists.
func snapshotChunks(t *testing.T, s *store.Store, snap store.Snapshot) map[chunk.Digest]bool {
	t.Helper()
	m, err := s.ReadManifest(snap)
	must(t, err)
	set := map[chunk.Digest]bool{}
	for _, f := range m.Files {
		if _, ok := index.Kind(f.Filename); !ok {
			continue
		}
		x, err := s.OpenIndexFile(snap, f.Filename)
		must(t, err)
		for i := 0; i < x.Len(); i++ {
			d, _, _ := x.Chunk(i)
			set[d] = true
		}
		x.Close()
	}
	return set
}

// TestEncryptedRoundTrip backs a rich tree up encrypted in each mode and
// reads it back with the key; no chunk holds the plaintext, and without
// the key the archive does not open.
func TestEncryptedRoundTrip(t *testing.T) {
	src := t.TempDir()
	acls := storetest.RichTree(t, src)
	const marker = "PXAR-PLAINTEXT-MARKER-77"
	writeFile(t, src+"/marked", bytes.Repeat([]byte(marker+"\n"), 5000))
	s := newStore(t)
	key := genKey(t)
	s.SetKeys(store.NewKeys(key))
	for _, mode := range []Mode{ModeLegacy, ModeData, ModeMetadata} {
		t.Run(mode.String(), func(t *testing.T) {
			res, snap := backupTreeKey(t, s, src, Options{Mode: mode, ChunkSize: 64 << 10}, key)
			if res.Mode != mode || res.Errors != 0 {
				t.Fatalf("result %+v", res)
			}
			if mode == ModeMetadata && res.ReadFiles != 0 {
				t.Errorf("metadata mode over an encrypted base read %d files", res.ReadFiles)
			}
			compareTree(t, openTree(t, s, snap), src, acls, nil)
			for d := range snapshotChunks(t, s, snap) {
				blob, err := os.ReadFile(s.ChunkPath(d))
				must(t, err)
				if kind, _ := chunk.BlobKind(blob); !kind.Encrypted() {
					t.Errorf("chunk %s is %v", d, kind)
				}
				if bytes.Contains(blob, []byte(marker)) || bytes.Contains(blob, []byte("hello world")) {
					t.Errorf("chunk %s holds plaintext", d)
				}
			}
			s.SetKeys(nil)
			defer s.SetKeys(store.NewKeys(key))
			m, err := s.ReadManifest(snap)
			must(t, err)
			c, err := store.NewCache(s, 0)
			must(t, err)
			defer c.Close()
			var ke *store.KeyMissingError
			if _, _, err := OpenName(context.Background(), s, snap, m, "root.pxar", c); !errors.As(err, &ke) {
				t.Fatalf("open without the key: %v", err)
			}
		})
	}
}

// TestEncryptedIncremental: a metadata-mode backup builds on the previous
// snapshot of the same key only; one of another key reads every file
// and shares no chunk with it.
func TestEncryptedIncremental(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	ka, kb := genKey(t), genKey(t)
	s.SetKeys(store.NewKeys(ka, kb))
	opt := Options{ChunkSize: 64 << 10, MaxPadding: -1}
	first, snapA := backupTreeKey(t, s, src, opt, ka)
	if first.Mode != ModeData || first.ReadFiles != 30 {
		t.Fatalf("first backup %+v", first)
	}
	changed := changeTree(t, src)
	res, snapA2 := backupTreeKey(t, s, src, opt, ka)
	if res.Mode != ModeMetadata || res.ReadFiles != int64(len(changed)) {
		t.Errorf("same key: mode %v read %d files, want %d", res.Mode, res.ReadFiles, len(changed))
	}
	compareTree(t, openTree(t, s, snapA2), src, nil, nil)
	res, snapB := backupTreeKey(t, s, src, opt, kb)
	if res.Mode != ModeData || res.ReadFiles != 30 || res.Previous != "" {
		t.Errorf("other key: %+v", res)
	}
	compareTree(t, openTree(t, s, snapB), src, nil, nil)
	a := snapshotChunks(t, s, snapA)
	for d := range snapshotChunks(t, s, snapA2) {
		a[d] = true
	}
	for d := range snapshotChunks(t, s, snapB) {
		if a[d] {
			t.Errorf("chunk %s shared by keys A and B", d)
		}
	}
	// a plain backup after them builds on none of them
	res, _ = backupTree(t, s, src, opt)
	if res.Mode != ModeData || res.ReadFiles != 30 {
		t.Errorf("plain after encrypted: %+v", res)
	}
}

// BenchmarkCryptFirstBackup is BenchmarkFirstBackup plain and encrypted,
// side by side (target: encrypted ≥ 85% of plain).
func BenchmarkCryptFirstBackup(b *testing.B) {
	root := benchTree(b)
	key, err := crypt.GenerateKey()
	must(b, err)
	defer key.Wipe()
	for _, mode := range []struct {
		name string
		key  *crypt.Key
	}{{"plain", nil}, {"encrypted", key}} {
		b.Run(mode.name, func(b *testing.B) {
			var res Result
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				s := benchStore(b)
				b.StartTimer()
				c := cpuTime()
				res, _ = backupTreeKey(b, s, root, Options{racyMargin: 2 * time.Second}, mode.key)
				cpu += cpuTime() - c
			}
			b.SetBytes(int64(res.Walk.Bytes))
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
