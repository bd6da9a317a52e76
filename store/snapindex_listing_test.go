package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// listingOf reads snap's manifest and its listing, as a mount makes it.
func listingOf(t *testing.T, s *Store, snap Snapshot) (*Manifest, SnapListing) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	mustOK(t, err)
	l, keep, err := s.ListingOf(snap, m)
	if !keep || err != nil {
		t.Fatalf("%s: listing not kept", snap)
	}
	return m, l
}

var testRoot = RootAttr{Mode: syscall.S_IFDIR | 0o750, UID: 1000, GID: 100, Mtime: 1600000000e9, Nlink: 2}

// putListing puts snap's listing (and a root for its first archive) the
// way a mount does, and returns the stamp.
func putListing(t *testing.T, x *ListingIndex, s *Store, snap Snapshot) ManifestStamp {
	t.Helper()
	l, stamp := x.Listing(snap, ManifestStamp{})
	if l != nil {
		t.Fatalf("%s: listed from the index before it was put", snap)
	}
	m, listing := listingOf(t, s, snap)
	x.PutListing(snap, stamp, m, listing)
	return stamp
}

// TestListingIndexStale: a listing counts only for the manifest it was
// made of; every writer's change of the manifest hides it, and it
// survives a write, a reopen and a `cairn snapshots` rewrite.
func TestListingIndexStale(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	g := Group{Type: TypeVM, ID: "100"}
	path, _ := makeImage(t, t.TempDir(), 1)
	a, _ := backupImage(t, s, g, day(1), path)
	b, _ := backupImage(t, s, g, day(2), path)

	x := s.OpenListingIndex(nil)
	stampA := putListing(t, x, s, a)
	putListing(t, x, s, b)
	l, _ := x.Listing(a, ManifestStamp{})
	if l == nil || len(l.Archives) == 0 || l.Archives[0].Name != "disk.img" || l.Archives[0].Kind != ArchiveImage {
		t.Fatalf("listing of a: %+v", l)
	}
	// a root for an image is refused; so is a root for an unknown archive
	x.PutRoot(a, stampA, "disk.img", testRoot)
	x.PutRoot(a, stampA, "nope.pxar", testRoot)
	if l, _ := x.Listing(a, ManifestStamp{}); l.Archives[0].Root != nil {
		t.Fatalf("root kept for an image: %+v", l.Archives[0])
	}
	x.Close()

	// reopened: from the file; `cairn snapshots` rewriting it keeps them
	sameAsTruth(t, s, "snapshots after the mount")
	sameAsTruth(t, s, "snapshots again")
	x = s.OpenListingIndex(nil)
	for _, snap := range []Snapshot{a, b} {
		if l, _ := x.Listing(snap, ManifestStamp{}); l == nil {
			t.Fatalf("%s: listing lost across a write and a snapshots listing", snap)
		}
	}
	// every change of the manifest hides the listing
	setNotes(t, s, a, "a note")
	if l, _ := x.Listing(a, ManifestStamp{}); l != nil {
		t.Fatal("listing of a still used after its manifest was rewritten")
	}
	mp := filepath.Join(s.SnapshotPath(b), ManifestName)
	data, err := os.ReadFile(mp)
	mustOK(t, err)
	f, err := os.OpenFile(mp, os.O_WRONLY, 0)
	mustOK(t, err)
	_, err = f.WriteAt(data, 0) // the same bytes in place: only the times move
	mustOK(t, err)
	mustOK(t, f.Close())
	if l, _ := x.Listing(b, ManifestStamp{}); l != nil {
		t.Fatal("listing of b still used after its manifest was rewritten in place")
	}
	// a stamp of an older version of the manifest does not take a root
	putListing(t, x, s, a)
	m, listing := listingOf(t, s, a)
	x.PutListing(a, stampA, m, listing)
	if l, _ := x.Listing(a, ManifestStamp{}); l == nil {
		t.Fatal("the newer listing was replaced by one of an older stamp")
	}
}

// TestListingIndexSettle: no listing of a manifest younger than
// snapIndexSettle.
func TestListingIndexSettle(t *testing.T) {
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 1)
	snap, _ := backupImage(t, s, Group{Type: TypeVM, ID: "1"}, day(1), path)
	x := s.OpenListingIndex(nil)
	putListing(t, x, s, snap)
	if l, _ := x.Listing(snap, ManifestStamp{}); l != nil {
		t.Fatal("listing of a manifest younger than snapIndexSettle kept")
	}
}

// TestListingIndexHostile: an index whose listings no writer makes is
// ignored as a whole (one log line) and rebuilt by the next write.
func TestListingIndexHostile(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 1)
	snap, _ := backupImage(t, s, Group{Type: TypeVM, ID: "1"}, day(1), path)
	x := s.OpenListingIndex(nil)
	putListing(t, x, s, snap)
	x.Close()
	ipath := filepath.Join(s.Root(), SnapIndexName)
	good, err := os.ReadFile(ipath)
	mustOK(t, err)
	var many []string
	for i := 0; i <= maxListedArchives; i++ {
		many = append(many, fmt.Sprintf(`{"n":"a%d.img","k":1,"z":1}`, i))
	}
	rootOf := func(kind int, mode uint32) string {
		return fmt.Sprintf(`{"n":"root.pxar","k":%d,"z":1,"r":{"m":%d,"u":0,"g":0,"t":0}}`, kind, mode)
	}
	cases := map[string]string{
		"slash in a name":    `{"n":"../x","k":1,"z":1}`,
		"empty name":         `{"n":"","k":1,"z":1}`,
		"dot-dot":            `{"n":"..","k":1,"z":1}`,
		"nul in a name":      `{"n":"a\u0000b","k":1,"z":1}`,
		"unknown kind":       `{"n":"x.img","k":99,"z":1}`,
		"kind zero":          `{"n":"x.img","k":0,"z":1}`,
		"twice":              `{"n":"x.img","k":1,"z":1},{"n":"x.img","k":1,"z":2}`,
		"too many":           strings.Join(many, ","),
		"root of an image":   `{"n":"x.img","k":1,"z":1,"r":{"m":16877}}`,
		"root not a dir":     rootOf(int(ArchiveSplitPxar), syscall.S_IFREG|0o644),
		"root a device":      rootOf(int(ArchiveSinglePxar), syscall.S_IFCHR|0o644),
		"data past the size": `{"n":"x.img","k":1,"z":1,"d":2}`,
		"data of a blob":     `{"n":"x.blob","k":4,"z":5,"d":2}`,
		"data of a pxar":     `{"n":"x.pxar","k":3,"z":5,"d":2}`,
		"archives a string":  `"x"`,
	}
	for name, archives := range cases {
		t.Run(name, func(t *testing.T) {
			var f snapIndexFile
			mustOK(t, json.Unmarshal(good, &f))
			raw, err := json.Marshal(f)
			mustOK(t, err)
			bad := bytes.Replace(raw, []byte(`"l":{"a":[`), []byte(`"l":{"a":[`+archives+`,`), 1)
			if name == "archives a string" {
				bad = bytes.Replace(raw, []byte(`"l":{"a":[`), []byte(`"l":{"a":`+archives+`,"x":[`), 1)
			}
			if bytes.Equal(bad, raw) {
				t.Fatal("no listing in the index to spoil")
			}
			write(t, ipath, bad, 0o600)
			var logBuf bytes.Buffer
			x := s.OpenListingIndex(slog.New(slog.NewTextHandler(&logBuf, nil)))
			if l, _ := x.Listing(snap, ManifestStamp{}); l != nil {
				t.Fatalf("listing %+v from a hostile index", l)
			}
			if !strings.Contains(logBuf.String(), ipath) {
				t.Fatalf("no log line names the ignored index: %q", logBuf.String())
			}
			putListing(t, x, s, snap)
			x.Close()
			x = s.OpenListingIndex(nil)
			if l, _ := x.Listing(snap, ManifestStamp{}); l == nil {
				t.Fatal("index not rebuilt")
			}
		})
	}
}

// TestListingIndexMerge: a mount's write keeps what another process
// wrote to the file after the mount read it.
func TestListingIndexMerge(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 1)
	a, _ := backupImage(t, s, Group{Type: TypeVM, ID: "1"}, day(1), path)
	b, _ := backupImage(t, s, Group{Type: TypeVM, ID: "2"}, day(1), path)
	x := s.OpenListingIndex(nil)
	x.Listing(a, ManifestStamp{}) // the mount reads the (missing) file
	y := s.OpenListingIndex(nil)
	putListing(t, y, s, b)
	y.Close()
	putListing(t, x, s, a)
	x.Close()
	z := s.OpenListingIndex(nil)
	for _, snap := range []Snapshot{a, b} {
		if l, _ := z.Listing(snap, ManifestStamp{}); l == nil {
			t.Fatalf("%s: listing lost by a write of another mount", snap)
		}
	}
}
