package test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/test/e2e"
)

func notesOf(t *testing.T, st, snap string) string {
	t.Helper()
	r := e2e.Cairn(t, nil, "--store", st, "snapshots", "--json", snap)
	var rows []habitsRow
	e2e.DecodeJSON(t, r, &rows)
	if len(rows) != 1 {
		t.Fatalf("snapshots %s: %d rows", snap, len(rows))
	}
	return rows[0].Notes
}

// TestNotes: notes are set from an argument or standard input, printed
// escaped, shown in the NOTES column (first line, escaped) and in the
// JSON; a protected snapshot takes them; too large or control
// characters are refused (exit 2) and leave the notes as they were;
// unfinished and missing snapshots fail.
func TestNotes(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, _ := e2e.UniqueNS("notes")
	snap := habitsBackup(t, st, ns, "web", "2024-05-01T10:00:00Z")
	if r := e2e.MustCairn(t, "--store", st, "notes", snap); r.Stdout != "" {
		t.Errorf("notes of a snapshot without: %q", r.Stdout)
	}
	e2e.MustCairn(t, "--store", st, "notes", snap, "nightly\tbefore the upgrade\nsecond line")
	e2e.MustCairn(t, "--store", st, "notes", snap, "nightly\tbefore the upgrade\nsecond line")
	e2e.MustCairn(t, "--store", st, "protect", snap)
	r := e2e.CairnStdin(t, nil, []byte("before the upgrade\n\tdb dumped\n\n"), "--store", st, "notes", snap, "-")
	if r.Code != 0 {
		t.Fatalf("notes of a protected snapshot from stdin: exit %d\n%s", r.Code, r.Stderr)
	}
	want := "before the upgrade\n\tdb dumped"
	if got := notesOf(t, st, snap); got != "before the upgrade …" {
		t.Errorf("snapshots --json notes: %q", got)
	}
	if r := e2e.MustCairn(t, "--store", st, "notes", snap); r.Stdout != want+"\n" {
		t.Errorf("notes printed: %q, want %q", r.Stdout, want+"\n")
	}
	// Hostile input: nothing changes.
	huge := bytes.Repeat([]byte("x"), 16<<20)
	for name, in := range map[string][]byte{
		"huge stdin":      huge,
		"64 KiB + 1":      bytes.Repeat([]byte("y"), 64<<10+1),
		"escape":          []byte("a\x1b[2Jb"),
		"carriage return": []byte("a\rb"),
		"NUL":             []byte("a\x00b"),
		"C1 control":      []byte("a\u009bb"),
		"not UTF-8":       []byte("a\xffb"),
	} {
		r := e2e.CairnStdin(t, nil, in, "--store", st, "notes", snap, "-")
		if r.Code != 2 || !strings.Contains(r.Stderr, "notes:") {
			t.Errorf("%s: exit %d, want 2\n%s", name, r.Code, e2e.Tail(r.Stderr))
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "notes", snap, "a\x1bb"); r.Code != 2 {
		t.Errorf("escape as an argument: exit %d", r.Code)
	}
	if r := e2e.MustCairn(t, "--store", st, "notes", snap); r.Stdout != want+"\n" {
		t.Errorf("notes after refused input: %q", r.Stdout)
	}
	e2e.MustCairn(t, "--store", st, "notes", snap, strings.Repeat("z", 64<<10)) // the bound itself is taken
	// Stored notes with control characters (another tool wrote them)
	// are printed escaped, in the column and by notes.
	e2e.MustCairn(t, "--store", st, "notes", snap, "")
	if got := notesOf(t, st, snap); got != "" {
		t.Errorf("notes after removal: %q", got)
	}
	setRawNotes(t, st, snap, "evil\x1b]0;title\x07")
	for _, args := range [][]string{{"notes", snap}, {"snapshots", snap}} {
		r := e2e.MustCairn(t, append([]string{"--store", st}, args...)...)
		if strings.ContainsAny(r.Stdout, "\x1b\x07") || !strings.Contains(r.Stdout, "evil") {
			t.Errorf("%s: stored control characters not escaped: %q", args[0], r.Stdout)
		}
	}
	unf := filepath.Join(st, "ns", ns, "host", "web", "2024-05-02T10:00:00Z")
	if err := os.Mkdir(unf, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"ns/" + ns + "/host/web/2024-05-02T10:00:00Z", "ns/" + ns + "/host/web/2020-01-01T00:00:00Z", "ns/" + ns + "/host/none"} {
		for _, args := range [][]string{{"notes", s}, {"notes", s, "text"}} {
			r := e2e.Cairn(t, nil, append([]string{"--store", st}, args...)...)
			if r.Code != 1 || !strings.Contains(r.Stderr, "unfinished") && !strings.Contains(r.Stderr, "not found") {
				t.Errorf("%q: exit %d, want 1\n%s", args, r.Code, r.Stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(unf, "index.json.blob")); err == nil {
		t.Errorf("notes on an unfinished snapshot wrote a manifest")
	}
}

// setRawNotes writes notes as another tool could have written them:
// cairn's own check is not in the way.
func setRawNotes(t *testing.T, st, snap, notes string) {
	t.Helper()
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := store.ParseRef(snap)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(notes)
	err = s.UpdateManifest(context.Background(), r.Snapshot, func(m *store.Manifest) error {
		m.Unprotected["notes"] = raw
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
