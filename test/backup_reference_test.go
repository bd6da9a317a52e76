package test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// Each archive's change-detection and dedup reference is the group's
// newest finished snapshot that has that archive (same key, last
// verification not failed), not the group's newest snapshot: a snapshot
// of a blob, an image only, another key or a failed verify in between
// does not make the next tree backup read every file again (issue 30).

// refSummary is what these tests read of `cairn backup --json`.
type refSummary struct {
	Snapshot     string `json:"snapshot"`
	FileArchives []struct {
		Archive   string `json:"archive"`
		Mode      string `json:"mode"`
		Previous  string `json:"previous"`
		ReadFiles int64  `json:"read_files"`
	} `json:"file_archives"`
	Images []struct {
		Archive  string `json:"archive"`
		Previous string `json:"previous"`
	} `json:"images"`
}

// refGroup is one group of the shared store, its backups at times one
// minute apart (explicit: no waiting for a new second).
type refGroup struct {
	t     *testing.T
	st    string
	ns    string
	id    string
	tree  string
	start time.Time
	n     int
}

func newRefGroup(t *testing.T, id string) *refGroup {
	t.Helper()
	ns, _ := e2e.UniqueNS("ref")
	g := &refGroup{t: t, st: e2e.SharedStore(t), ns: ns, id: id, tree: t.TempDir(),
		start: time.Now().UTC().Add(-time.Hour).Truncate(time.Second)}
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("d%d/f%02d.txt", i%4, i)] = strings.Repeat(fmt.Sprint(id, i), 300)
	}
	e2e.WriteTree(t, g.tree, files)
	// files changed within 2 s before a backup are read again by the next
	time.Sleep(2100 * time.Millisecond)
	return g
}

// backup runs one backup of the group at its next time with args (the
// archives and flags) and returns its summary.
func (g *refGroup) backup(stdin []byte, args ...string) refSummary {
	g.t.Helper()
	g.n++
	at := g.start.Add(time.Duration(g.n) * time.Minute).Format(time.RFC3339)
	all := append([]string{"--store", g.st, "backup", "--ns", g.ns, "--id", g.id, "--time", at, "--json"}, args...)
	r := e2e.CairnStdin(g.t, nil, stdin, all...)
	if r.Code != 0 {
		g.t.Fatalf("cairn %s: exit %d\n%s\n%s", strings.Join(all, " "), r.Code, r.Stdout, r.Stderr)
	}
	var s refSummary
	if err := json.Unmarshal([]byte(r.Stdout), &s); err != nil {
		g.t.Fatalf("summary %q: %v", r.Stdout, err)
	}
	return s
}

// tree checks the summary's doc.pxar: its reference and files read.
func (g *refGroup) treeRef(s refSummary, want string, read int64) {
	g.t.Helper()
	for _, fa := range s.FileArchives {
		if fa.Archive == "doc.pxar" {
			if fa.Previous != want || fa.ReadFiles != read {
				g.t.Fatalf("%s: doc.pxar (%s) reference %q, read %d files; want reference %q, %d read",
					s.Snapshot, fa.Mode, fa.Previous, fa.ReadFiles, want, read)
			}
			return
		}
	}
	g.t.Fatalf("%s: no doc.pxar in %+v", s.Snapshot, s)
}

func (g *refGroup) imageRef(s refSummary, want string) {
	g.t.Helper()
	if len(s.Images) != 1 || s.Images[0].Previous != want {
		g.t.Fatalf("%s: images %+v, want disk.img with reference %q", s.Snapshot, s.Images, want)
	}
}

// A blob-only snapshot between two tree backups.
func TestBackupReferenceSkipsBlobSnapshot(t *testing.T) {
	g := newRefGroup(t, "blob")
	first := g.backup(nil, "doc.pxar:"+g.tree)
	g.treeRef(first, "", 40)
	g.backup([]byte("conf\n"), "conf.blob:-")
	third := g.backup(nil, "doc.pxar:"+g.tree)
	g.treeRef(third, first.Snapshot, 0)
	// the text summary names the reference too
	at := g.start.Add(time.Duration(g.n+1) * time.Minute).Format(time.RFC3339)
	r := e2e.MustCairn(t, "--store", g.st, "backup", "--ns", g.ns, "--id", g.id, "--time", at, "doc.pxar:"+g.tree)
	if !strings.Contains(r.Stdout, "doc.pxar (metadata, reference "+third.Snapshot+")") ||
		!strings.Contains(r.Stdout, "read     0 files") {
		t.Fatalf("text summary:\n%s", r.Stdout)
	}
}

// Image-only and tree-only snapshots between image+tree backups: each
// archive takes its own reference, and the image keeps its chunk size.
func TestBackupReferencePerArchive(t *testing.T) {
	g := newRefGroup(t, "img")
	img, _ := e2e.SparseImage(t, 1<<20, 7)
	first := g.backup(nil, "--chunk-size", "64K", "disk.img:"+img, "doc.pxar:"+g.tree)
	imgOnly := g.backup(nil, "disk.img:"+img)
	third := g.backup(nil, "disk.img:"+img, "doc.pxar:"+g.tree)
	g.treeRef(third, first.Snapshot, 0)
	g.imageRef(first, "")
	g.imageRef(imgOnly, first.Snapshot)
	g.imageRef(third, imgOnly.Snapshot)
	treeOnly := g.backup(nil, "doc.pxar:"+g.tree)
	g.treeRef(treeOnly, third.Snapshot, 0)
	fifth := g.backup(nil, "disk.img:"+img, "doc.pxar:"+g.tree)
	g.imageRef(fifth, third.Snapshot)
	g.treeRef(fifth, treeOnly.Snapshot, 0)
	// the image kept 64 KiB chunks through the tree-only snapshot
	if cs := fidxChunkSize(t, g.st, fifth.Snapshot); cs != 64<<10 {
		t.Fatalf("%s: disk.img has %d-byte chunks, want the reference's 64 KiB", fifth.Snapshot, cs)
	}
}

// fidxChunkSize reads the chunk size of a snapshot's disk.img.fidx
// (PBS's header: magic, uuid, ctime, csum, size, then chunk size).
func fidxChunkSize(t *testing.T, st, snap string) uint64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(st, snap, "disk.img.fidx"))
	if err != nil || len(data) < 80 {
		t.Fatalf("read index of %s: %v", snap, err)
	}
	return binary.LittleEndian.Uint64(data[72:80])
}

// A snapshot encrypted with a key is not a plain backup's reference.
func TestBackupReferenceSkipsOtherKey(t *testing.T) {
	g := newRefGroup(t, "key")
	key := filepath.Join(t.TempDir(), "k.key")
	e2e.MustCairn(t, "key", "create", "--kdf", "none", key)
	first := g.backup(nil, "doc.pxar:"+g.tree)
	enc := g.backup(nil, "--keyfile", key, "doc.pxar:"+g.tree)
	g.treeRef(enc, "", 40) // no snapshot of that key before
	third := g.backup(nil, "doc.pxar:"+g.tree)
	g.treeRef(third, first.Snapshot, 0)
	again := g.backup(nil, "--keyfile", key, "doc.pxar:"+g.tree)
	g.treeRef(again, enc.Snapshot, 0)
}

// The newest snapshot that has the archive failed verification: the one
// before it is the reference.
func TestBackupReferenceSkipsFailedVerify(t *testing.T) {
	g := newRefGroup(t, "verify")
	first := g.backup(nil, "doc.pxar:"+g.tree)
	second := g.backup(nil, "doc.pxar:"+g.tree)
	// damage the second's payload index: its last entry's digest
	idx := filepath.Join(g.st, second.Snapshot, "doc.ppxar.didx")
	data, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(idx, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := e2e.Cairn(t, nil, "--store", g.st, "verify", second.Snapshot); r.Code != 3 {
		t.Fatalf("verify of a damaged snapshot: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	third := g.backup(nil, "doc.pxar:"+g.tree)
	g.treeRef(third, first.Snapshot, 0)
}
