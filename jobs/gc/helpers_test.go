package gc

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

const testChunk = 64 << 10

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

var vm = store.Group{Type: store.TypeVM, ID: "100"}

// backup writes a snapshot of data (64 KiB chunks) at t0 plus i minutes.
func backup(t testing.TB, s *store.Store, g store.Group, i int, data []byte) store.Snapshot {
	t.Helper()
	return storetest.BackupImage(t, s, g, t0.Add(time.Duration(i)*time.Minute), storetest.Image{Data: data, ChunkSize: testChunk})
}

// digests returns the chunks a snapshot's indexes reference.
func digests(t testing.TB, s *store.Store, snap store.Snapshot) map[chunk.Digest]bool {
	t.Helper()
	names, err := s.SnapshotIndexFiles(snap)
	if err != nil {
		t.Fatal(err)
	}
	out := map[chunk.Digest]bool{}
	for _, n := range names {
		x, err := s.OpenIndexFile(snap, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x.Len() {
			d, _, _ := x.Chunk(i)
			out[d] = true
		}
		x.Close()
	}
	return out
}

// ageChunks sets the atime of every file in the prefix directories back
// by age (mtime too when withMtime), as if nothing had used them since.
func ageChunks(t testing.TB, s *store.Store, age time.Duration, withMtime bool) {
	t.Helper()
	old := time.Now().Add(-age)
	root := filepath.Join(s.Root(), ".chunks")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(p) == root {
			return err
		}
		mt := time.Time{}
		if withMtime {
			mt = old
		}
		return os.Chtimes(p, old, mt)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// run runs a GC with cutoff and fails the test on error.
func run(t testing.TB, s *store.Store, cutoff time.Duration) Report {
	t.Helper()
	rep, err := Run(context.Background(), s, Options{AtimeCutoff: cutoff})
	if err != nil {
		t.Fatalf("gc: %v (report %+v)", err, rep)
	}
	if rep.State != StateOK {
		t.Fatalf("gc state %s: %s", rep.State, rep.Error)
	}
	return rep
}

// checkChunks fails unless every chunk in want exists.
func checkChunks(t testing.TB, s *store.Store, want map[chunk.Digest]bool) {
	t.Helper()
	for d := range want {
		if !storetest.HasChunk(t, s, d) {
			t.Errorf("chunk %s is gone, but a snapshot uses it", d)
		}
	}
}

// countChunks counts the store's chunk files.
func countChunks(t testing.TB, s *store.Store) int {
	t.Helper()
	n := 0
	if err := s.WalkChunks(context.Background(), func(chunk.Digest) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
