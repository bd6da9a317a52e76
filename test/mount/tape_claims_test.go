package test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

const claimTime = "2024-04-01T10:00:00Z"

// tapeClaimResult is the part of `cairn tape restore --json` about
// snapshots that several archives claim.
type tapeClaimResult struct {
	State  string `json:"state"`
	Result struct {
		OK        int `json:"snapshots_ok"`
		Failed    int `json:"snapshots_failed"`
		Refused   int `json:"archives_refused"`
		Snapshots []struct {
			Snapshot, State, Error string
			Archives               []struct{ Tape, State, Reason string }
		} `json:"snapshots"`
	} `json:"result"`
}

// snapshotCopy copies the files of a snapshot of store st into a new
// directory and returns it with the file names, the manifest first (the
// order of an exported archive).
func snapshotCopy(t *testing.T, st, snap string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	files := []string{"index.json.blob"}
	entries, err := os.ReadDir(filepath.Join(st, snap))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name()[0] == '.' {
			continue
		}
		b, err := os.ReadFile(filepath.Join(st, snap, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		e2e.Write(t, filepath.Join(dir, e.Name()), string(b), 0o644)
		if e.Name() != files[0] {
			files = append(files, e.Name())
		}
	}
	return dir, files
}

// forgery is a snapshot archive's content that claims a snapshot it is
// not: files to write and what the restore must say of it.
type forgery struct {
	name, dir string
	files     []string
	why       string
}

// forgeries of snapshot snap of st, one of each class: another
// snapshot's files (other), an index whose entries changed, a file its
// manifest does not list, no manifest, an index missing, and a valid
// snapshot of the same name whose chunks are not on the media set
// (elsewhere).
func forgeries(t *testing.T, st, snap, other, elsewhere string) []forgery {
	dir, files := snapshotCopy(t, st, other)
	out := []forgery{{"another snapshot", dir, files, "names vm/2/"}}
	dir, files = snapshotCopy(t, st, snap)
	idx := filepath.Join(dir, "disk.img.fidx")
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	b[4096] ^= 1
	e2e.Write(t, idx, string(b), 0o644)
	out = append(out, forgery{"index changed", dir, files, "its entries hash to"})
	dir, files = snapshotCopy(t, st, snap)
	e2e.Write(t, filepath.Join(dir, "extra.blob"), "x", 0o644)
	out = append(out, forgery{"file not in the manifest", dir, append(files, "extra.blob"), `"extra.blob" is in the archive but not in its manifest`})
	dir, files = snapshotCopy(t, st, snap)
	out = append(out, forgery{"no manifest", dir, files[1:], "holds no index.json.blob"})
	out = append(out, forgery{"index missing", dir, slices.DeleteFunc(slices.Clone(files), func(f string) bool { return f == "disk.img.fidx" }),
		"disk.img.fidx, listed in its manifest, is not in the archive"})
	dir, files = snapshotCopy(t, st, elsewhere)
	return append(out, forgery{"chunks elsewhere", dir, files, "neither on the media set nor in the store"})
}

// claimEnv is what the tape claim scenarios share.
type claimEnv struct {
	st, storeName, dst string
	a                  []byte // the data of every genuine snapshot
	elsewhere          string // a snapshot of vm/1 at claimTime never exported
}

func (c claimEnv) restore(t *testing.T, drive string, args ...string) e2e.Result {
	return e2e.Cairn(t, nil, append([]string{"--store", c.dst, "tape", "restore", "--drive", drive}, args...)...)
}

// export backs up vm/1 and vm/2 of the data in a new namespace, exports
// those of exportIDs to a new drive and returns the drive and the
// snapshots.
func (c claimEnv) export(t *testing.T, exportIDs ...string) (drive, snapA, snapB string) {
	ns, _ := e2e.UniqueNS("tapeclaim")
	snapA, snapB = e2e.TapeBackup(t, c.st, ns, "1", claimTime, c.a), e2e.TapeBackup(t, c.st, ns, "2", claimTime, c.a) // B: A's chunks
	drive = t.TempDir()
	args := []string{"--store", c.st, "tape", "export", "--drive", drive, "--pool", "claims"}
	for _, id := range exportIDs {
		args = append(args, map[string]string{"1": snapA, "2": snapB}[id])
	}
	e2e.MustCairn(t, args...)
	return drive, snapA, snapB
}

// testTapeClaims: a media set holding several snapshot archives that
// claim one snapshot restores the one whose content verifies, wherever
// it is, names each other archive with why it was refused (one of each
// class of forgery) or that it is a duplicate, and exits 3; two that
// verify and disagree restore neither; a snapshot whose only archive is
// refused fails the restore (exit 3, not 0).
func testTapeClaims(t *testing.T, dst string) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("tapeclaim")
	c := claimEnv{st: st, storeName: filepath.Base(st), dst: dst, a: e2e.RandBytes(1<<20, seed+51)}
	c.elsewhere = e2e.TapeBackup(t, st, ns, "1", claimTime, e2e.RandBytes(1<<20, seed+52))
	claimRefusedOnly(t, c)
	claimGenuineFirst(t, c)
	claimGenuineLast(t, c)
	claimConflict(t, c)
}

// claimRefusedOnly: a snapshot whose only archive is refused (it holds
// vm/2's files) fails the restore, exit 3.
func claimRefusedOnly(t *testing.T, c claimEnv) {
	drive, snapA, snapB := c.export(t, "2")
	dir, files := snapshotCopy(t, c.st, snapB)
	e2e.AppendSnapshotArchive(t, drive, "claims", c.storeName, snapA, dir, files)
	r := c.restore(t, drive)
	if r.Code != 3 || !strings.Contains(r.Stdout, "1 restored, 0 already in the store, 1 failed") || !strings.Contains(r.Stdout, "names vm/2/") ||
		!strings.Contains(r.Stderr, "1 snapshot(s) failed") {
		t.Fatalf("a refused snapshot: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// claimGenuineFirst: the genuine archive first, then one of each
// forgery and a copy of the genuine one.
func claimGenuineFirst(t *testing.T, c claimEnv) {
	drive, snapA, snapB := c.export(t, "1", "2")
	forged := forgeries(t, c.st, snapA, snapB, c.elsewhere)
	dup, dupFiles := snapshotCopy(t, c.st, snapA)
	for _, f := range append(forged, forgery{dir: dup, files: dupFiles}) {
		e2e.AppendSnapshotArchive(t, drive, "claims", c.storeName, snapA, f.dir, f.files)
	}
	r := c.restore(t, drive)
	if r.Code != 3 || !strings.Contains(r.Stdout, "2 restored, 0 already in the store, 0 failed; 6 snapshot archive(s) refused") ||
		!strings.Contains(r.Stderr, "6 snapshot archive(s) refused") || !strings.Contains(r.Stdout, "snapshots claimed by several archives:\n  "+snapA+"\n") {
		t.Fatalf("restore: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	lines := strings.Split(r.Stdout[strings.Index(r.Stdout, "snapshots claimed"):], "\n")[2:]
	for i, f := range forged {
		if !strings.Contains(lines[i+1], ": refused: its content does not verify: ") || !strings.Contains(lines[i+1], f.why) {
			t.Errorf("%s: line %q, want refused: %s", f.name, lines[i+1], f.why)
		}
	}
	if !strings.Contains(lines[0], ": restored") || !strings.Contains(lines[len(forged)+1], ": duplicate: the same files as tape ") {
		t.Errorf("claims:\n%s", strings.Join(lines, "\n"))
	}
	if got := e2e.MustCairn(t, "--store", c.dst, "cat", snapA, "disk.img"); !bytes.Equal([]byte(got.Stdout), c.a) {
		t.Fatal("restored snapshot differs")
	}
	e2e.MustCairn(t, "--store", c.dst, "verify", snapA, snapB)
}

// claimGenuineLast: forgeries first, the genuine archive last (its
// chunks are on the set as B's).
func claimGenuineLast(t *testing.T, c claimEnv) {
	drive, snapA, snapB := c.export(t, "2")
	forged := forgeries(t, c.st, snapA, snapB, c.elsewhere)[:2]
	genuine, files := snapshotCopy(t, c.st, snapA)
	for _, f := range append(forged, forgery{dir: genuine, files: files}) {
		e2e.AppendSnapshotArchive(t, drive, "claims", c.storeName, snapA, f.dir, f.files)
	}
	var res tapeClaimResult
	r := c.restore(t, drive, "--json", snapA)
	e2e.DecodeJSON(t, r, &res)
	if s := res.Result.Snapshots; r.Code != 3 || res.Result.OK != 1 || res.Result.Refused != 2 || len(s) != 1 || len(s[0].Archives) != 3 ||
		s[0].Archives[0].State != "refused" || s[0].Archives[1].State != "refused" || s[0].Archives[2].State != "restored" {
		t.Fatalf("genuine archive last: exit %d %+v", r.Code, res)
	}
	if got := e2e.MustCairn(t, "--store", c.dst, "cat", snapA, "disk.img"); !bytes.Equal([]byte(got.Stdout), c.a) {
		t.Fatal("restored snapshot differs")
	}
}

// claimConflict: two archives that verify and disagree (the other is a
// valid snapshot of vm/1 at the same time, in another namespace, whose
// chunks are on the set): neither is restored.
func claimConflict(t *testing.T, c claimEnv) {
	drive, snapA, _ := c.export(t, "1")
	e2e.MustCairn(t, "--store", c.st, "tape", "export", "--drive", drive, "--pool", "claims", c.elsewhere)
	other, files := snapshotCopy(t, c.st, c.elsewhere)
	e2e.AppendSnapshotArchive(t, drive, "claims", c.storeName, snapA, other, files)
	var res tapeClaimResult
	r := c.restore(t, drive, "--json", snapA)
	e2e.DecodeJSON(t, r, &res)
	if s := res.Result.Snapshots; r.Code != 3 || res.Result.Failed != 1 || len(s) != 1 || !strings.Contains(s[0].Error, "verify and disagree") ||
		len(s[0].Archives) != 2 || s[0].Archives[0].State != "conflict" || s[0].Archives[1].State != "conflict" {
		t.Fatalf("archives that disagree: exit %d %+v", r.Code, res)
	}
	if r := e2e.Cairn(t, nil, "--store", c.dst, "ls", snapA); r.Code == 0 {
		t.Fatalf("a snapshot two archives disagree on was restored:\n%s", r.Stdout)
	}
}
