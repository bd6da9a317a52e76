package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
)

// forgetOut is `cairn forget --json`.
type forgetOut struct {
	DryRun    bool `json:"dry_run"`
	Snapshots []struct {
		Snapshot string `json:"snapshot"`
		Finished bool   `json:"finished"`
		State    string `json:"state"`
		Error    string `json:"error"`
	} `json:"snapshots"`
	GroupState string `json:"group_state"`
	Removed    int    `json:"removed"`
	Refused    int    `json:"refused"`
}

func (o forgetOut) states() map[string]string {
	m := map[string]string{}
	for _, s := range o.Snapshots {
		m[s.Snapshot] = s.State
	}
	return m
}

// snapRow is an entry of `cairn snapshots --json`.
type snapRow struct {
	Snapshot  string `json:"snapshot"`
	Group     string `json:"group"`
	Finished  bool   `json:"finished"`
	Protected bool   `json:"protected"`
}

func listSnaps(t *testing.T, st, group string) []snapRow {
	t.Helper()
	var rows, out []snapRow
	if err := json.Unmarshal([]byte(e2e.MustCairn(t, "--store", st, "snapshots", "--json").Stdout), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Group == group {
			out = append(out, r)
		}
	}
	return out
}

// treeOf describes every file under dir (path, type, size, mtime): a
// change anywhere shows.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %o %d %d.%d\n", p, st.Mode, st.Size, st.Mtim.Sec, st.Mtim.Nsec)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func forgetJSON(t *testing.T, st string, wantCode int, args ...string) forgetOut {
	t.Helper()
	r := e2e.Cairn(t, nil, append([]string{"--store", st, "forget", "--json"}, args...)...)
	if r.Code != wantCode {
		t.Fatalf("forget %q: exit %d, want %d\n%s%s", args, r.Code, wantCode, r.Stdout, r.Stderr)
	}
	var o forgetOut
	if err := json.Unmarshal([]byte(r.Stdout), &o); err != nil {
		t.Fatalf("forget %q: %v\n%s", args, err, r.Stdout)
	}
	return o
}

// TestForgetAndProtect: protect shows in snapshots; --dry-run changes
// nothing and says what would go; a protected snapshot is refused (exit
// 3, named, with how to unprotect); the others named are removed;
// --group removes the rest and the group; bad names are usage errors.
func TestForgetAndProtect(t *testing.T) {
	st := e2e.SharedStore(t)
	s := e2e.BackupsOf(t, st, "forget", 3)
	group := filepath.Join(st, "host", "forget")

	e2e.MustCairn(t, "--store", st, "protect", s[0])
	rows := listSnaps(t, st, "host/forget")
	if len(rows) != 3 || !rows[0].Protected || rows[1].Protected || rows[2].Protected {
		t.Fatalf("snapshots after protect: %+v", rows)
	}
	if out := e2e.MustCairn(t, "--store", st, "snapshots").Stdout; !strings.Contains(out, "PROTECTED") || !regexpLine(out, s[0], "yes") {
		t.Errorf("snapshots text does not show the protection:\n%s", out)
	}

	before := treeOf(t, group)
	r := e2e.Cairn(t, nil, "--store", st, "forget", "--dry-run", s[0], s[1])
	if r.Code != 3 || !strings.Contains(r.Stdout, "would remove "+s[1]) ||
		!strings.Contains(r.Stderr, s[0]) || !strings.Contains(r.Stderr, "cairn unprotect "+s[0]) {
		t.Errorf("forget --dry-run: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	o := forgetJSON(t, st, 3, "--dry-run", "--group", "host/forget")
	if want := map[string]string{s[0]: "protected", s[1]: "would_remove", s[2]: "would_remove"}; !mapsEqual(o.states(), want) || !o.DryRun || o.GroupState != "kept" {
		t.Errorf("forget --dry-run --group: %+v", o)
	}
	if after := treeOf(t, group); after != before {
		t.Fatalf("--dry-run changed the store:\nbefore\n%s\nafter\n%s", before, after)
	}

	o = forgetJSON(t, st, 3, s[0], s[1])
	if want := map[string]string{s[0]: "protected", s[1]: "removed"}; !mapsEqual(o.states(), want) || o.Removed != 1 || o.Refused != 1 {
		t.Errorf("forget protected + unprotected: %+v", o)
	}
	if rows := listSnaps(t, st, "host/forget"); len(rows) != 2 || rows[0].Snapshot != s[0] || rows[1].Snapshot != s[2] {
		t.Errorf("after forget: %+v", rows)
	}
	r = e2e.Cairn(t, nil, "--store", st, "forget", "--group", "host/forget")
	if r.Code != 3 || !strings.Contains(r.Stdout, "removed "+s[2]) || !strings.Contains(r.Stderr, "cairn unprotect "+s[0]) || !dirExists(group) {
		t.Errorf("forget --group with a protected snapshot: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	e2e.MustCairn(t, "--store", st, "unprotect", s[0])
	if rows := listSnaps(t, st, "host/forget"); len(rows) != 1 || rows[0].Protected {
		t.Errorf("after unprotect: %+v", rows)
	}
	o = forgetJSON(t, st, 0, "--group", "host/forget")
	if o.GroupState != "removed" || o.Removed != 1 || dirExists(group) {
		t.Errorf("forget --group: %+v; group dir there: %v", o, dirExists(group))
	}
	if o := forgetJSON(t, st, 3, s[0]); o.states()[s[0]] != "not_found" {
		t.Errorf("forget of a removed snapshot: %+v", o)
	}

	for _, args := range [][]string{
		{"host/forget"}, {"host/forget/latest"}, {"host/../x/2024-01-01T00:00:00Z"}, {"host/forget/yesterday"},
		{"--group", "host/forget/2024-01-01T00:00:00Z"}, {"--group", "host/forget/latest"}, {"--group", "a/b", "c/d"},
	} {
		if r := e2e.Cairn(t, nil, append([]string{"--store", st, "forget"}, args...)...); r.Code != 2 {
			t.Errorf("forget %q: exit %d, want 2 (usage)\n%s", args, r.Code, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "protect", "host/forget"); r.Code != 2 {
		t.Errorf("protect without a time: exit %d, want 2", r.Code)
	}
}

func regexpLine(out, first, has string) bool {
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 0 && f[0] == first && slices.Contains(f, has) {
			return true
		}
	}
	return false
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func dirExists(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// TestForgetRefusesInUse: a snapshot a running backup builds on, the
// running backup's own (unfinished) snapshot, and a snapshot a restore is
// reading are refused, naming the lock; each is removed once its user
// ended (the killed backup's unfinished snapshot too).
func TestForgetRefusesInUse(t *testing.T) {
	st := e2e.SharedStore(t)
	s := e2e.BackupsOf(t, st, "inuse", 2)

	// A backup reading from a FIFO runs until we write: it holds s[1]
	// (its previous snapshot) shared and its own snapshot exclusively.
	fifo := filepath.Join(t.TempDir(), "pipe")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	bk := exec.Command(e2e.Binary(), "--store", st, "backup", "--type", "host", "--id", "inuse", "--no-sync", "d.img:"+fifo)
	if err := bk.Start(); err != nil {
		t.Fatal(err)
	}
	defer bk.Process.Kill()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var running string
	for deadline := time.Now().Add(time.Minute); running == ""; time.Sleep(20 * time.Millisecond) {
		for _, r := range listSnaps(t, st, "host/inuse") {
			if !r.Finished {
				running = r.Snapshot
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the backup made no snapshot within a minute")
		}
	}
	o := forgetJSON(t, st, 3, s[1], running)
	if want := map[string]string{s[1]: "locked", running: "locked"}; !mapsEqual(o.states(), want) {
		t.Errorf("forget during a backup: %+v", o)
	}
	for _, x := range o.Snapshots {
		if !strings.Contains(x.Error, "locked") || !strings.Contains(x.Error, "lock ") {
			t.Errorf("%s: refusal does not name the lock: %q", x.Snapshot, x.Error)
		}
	}
	bk.Process.Kill()
	bk.Wait()
	o = forgetJSON(t, st, 0, running, s[1])
	if o.Removed != 2 || o.Snapshots[0].Finished {
		t.Errorf("forget after the backup was killed: %+v", o)
	}

	// A restore to a pipe nobody reads yet holds s[0] while it writes.
	restore := exec.Command(e2e.Binary(), "--store", st, "restore", s[0], "d.img", "-")
	out, err := restore.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	restore.Stderr = &stderr
	if err := restore.Start(); err != nil {
		t.Fatal(err)
	}
	defer restore.Process.Kill()
	first := make([]byte, 1)
	if _, err := io.ReadFull(out, first); err != nil { // the restore is under way
		t.Fatalf("restore: %v %s", err, stderr.String())
	}
	if o := forgetJSON(t, st, 3, s[0]); o.states()[s[0]] != "locked" {
		t.Errorf("forget during a restore: %+v", o)
	}
	rest, err := io.ReadAll(out)
	if err != nil || restore.Wait() != nil {
		t.Fatalf("restore: %v %s", err, stderr.String())
	}
	if got := append(first, rest...); !bytes.Equal(got, e2e.RandBytes(200000, 100)) {
		t.Errorf("restored %d bytes, not the backed-up image", len(got))
	}
	if o := forgetJSON(t, st, 0, s[0]); o.Removed != 1 {
		t.Errorf("forget after the restore: %+v", o)
	}
	if _, err := os.Lstat(filepath.Join(st, "host", "inuse", strings.TrimPrefix(s[0], "host/inuse/"))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("snapshot dir after forget: %v", err)
	}
}
