package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSnapIndexSweep: writing the index removes the temporary files of
// crashed writers that are old enough, and nothing else: not a young
// one (a live writer's), not a symlink or a directory of that name (nor
// what the symlink points to), not another name.
func TestSnapIndexSweep(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 1)
	backupImage(t, s, Group{Type: TypeVM, ID: "1"}, day(1), path)
	root := s.Root()
	old := time.Now().Add(-2 * snapIndexTempAge)
	mk := func(name string, at time.Time) string {
		p := filepath.Join(root, name)
		write(t, p, []byte("partial"), 0o600)
		mustOK(t, os.Chtimes(p, at, at))
		return p
	}
	stale := mk(SnapIndexName+".tmp-123456", old)
	young := mk(SnapIndexName+".tmp-777", time.Now())
	other := mk(SnapIndexName+".tmp-12x", old)
	otherPrefix := mk(".cairn-other.tmp-1", old)
	target := mk("precious", old)
	link := filepath.Join(root, SnapIndexName+".tmp-42")
	mustOK(t, os.Symlink(target, link))
	dir := filepath.Join(root, SnapIndexName+".tmp-43")
	mustOK(t, os.Mkdir(dir, 0o700))
	mustOK(t, os.Chtimes(dir, old, old))

	sameAsTruth(t, s, "write the index")
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temporary file kept: %v", err)
	}
	for _, p := range []string{young, other, otherPrefix, target, link, dir} {
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("%s removed: %v", p, err)
		}
	}
	if got, err := os.ReadFile(target); err != nil || string(got) != "partial" {
		t.Fatalf("symlink target: %q, %v", got, err)
	}
}
