package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestSnapIndexTooLarge: entries whose listings would make the file
// larger than its limit are written without the listings, and the
// summaries stay; the file is never refused for its listings alone.
func TestSnapIndexTooLarge(t *testing.T) {
	root := t.TempDir()
	name := strings.Repeat("n", 200)
	var archives []ListedArchive
	for i := range 20 {
		archives = append(archives, ListedArchive{Name: fmt.Sprintf("%s%02d.img", name, i), Kind: ArchiveImage, Size: 1})
	}
	es := map[string]snapIndexEntry{}
	n := maxSnapIndexFile/(20*len(name)) + 1
	for i := range n {
		es[fmt.Sprintf("vm/%d/2024-01-01T00:00:00Z", i)] = snapIndexEntry{
			Manifest: fileKey{Ino: uint64(i + 1), Size: 1, Mtime: 1, Ctime: 1},
			Summary:  ManifestSummary{Archives: []string{"disk.img"}, CryptMode: "none"},
			Listing:  &SnapListing{Archives: archives}, Dir: uint64(i + 1),
		}
	}
	mustOK(t, writeSnapIndex(root, es))
	got, err := readSnapIndex(filepath.Join(root, SnapIndexName))
	mustOK(t, err)
	if len(got) != n {
		t.Fatalf("%d entries read back, %d written", len(got), n)
	}
	for k, e := range got {
		if e.Listing != nil || e.Dir != 0 || e.Manifest != es[k].Manifest || e.Summary.CryptMode != "none" {
			t.Fatalf("%s: %+v", k, e)
		}
	}
}
