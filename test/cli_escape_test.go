package test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/test/e2e"
)

// hostileText holds one string of each class a terminal acts on or that
// breaks a line: CSI and OSC sequences, BEL, CR, newline, a C1 control
// (CSI in one rune), a bidi override and DEL.
var hostileText = []string{"esc\x1b[31mred", "osc\x1b]0;title\a", "bell\a", "cr\rover", "nl\nx", "c1\u009b2J", "bidi\u202egpj", "del\x7f"}

// TestHumanOutputEscapesManifest: what a manifest holds reaches no human
// output raw: archive names, notes, the verify state and an error quoting
// a file name are escaped in snapshots, ls, verify, diff, cat and tape
// output, while --json gives them back as they are.
func TestHumanOutputEscapesManifest(t *testing.T) {
	st, first, second, broken, notes, state := escapeStore(t)
	dir := t.TempDir()
	outputs := map[string]e2e.Result{
		"snapshots":        e2e.Cairn(t, nil, "--store", st, "snapshots"),
		"ls":               e2e.MustCairn(t, "--store", st, "ls", first),
		"diff":             e2e.MustCairn(t, "--store", st, "diff", first, second),
		"verify":           e2e.Cairn(t, nil, "--store", st, "verify", second, broken),
		"cat broken":       e2e.Cairn(t, nil, "--store", st, "cat", broken, hostileText[0]+".blob"),
		"ls broken":        e2e.Cairn(t, nil, "--store", st, "ls", broken),
		"restore missing":  e2e.Cairn(t, nil, "--store", st, "restore", first, "esc\x1b[31mnone.blob", filepath.Join(dir, "out")),
		"tape export":      e2e.Cairn(t, nil, "--store", st, "tape", "export", "--drive", t.TempDir(), "--pool", "p", first),
		"snapshots groups": e2e.MustCairn(t, "--store", st, "snapshots", "--groups"),
	}
	for what, r := range outputs {
		for _, out := range []string{r.Stdout, r.Stderr} {
			for _, line := range strings.Split(out, "\n") {
				if i := strings.IndexFunc(line, func(r rune) bool { return !unicode.IsPrint(r) }); i >= 0 {
					t.Errorf("%s: unescaped %q in line %q", what, []rune(line[i:])[0], line)
				}
			}
		}
	}
	for what, want := range map[string]string{
		"snapshots": `verify "ok\x1b[31mEVILesc\x1b[31mredosc`, "ls": `"esc\x1b[31mred.blob"`, "diff": `"c1\u009b2J.blob"`,
	} {
		if !strings.Contains(outputs[what].Stdout, want) {
			t.Errorf("%s lacks %s:\n%s", what, want, outputs[what].Stdout)
		}
	}
	for _, what := range []string{"verify", "cat broken", "ls broken"} {
		if r := outputs[what]; r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, `bad\x1b[31m`) {
			t.Errorf("%s: exit %d, want an escaped error naming the crypt mode:\n%s%s", what, r.Code, r.Stdout, r.Stderr)
		}
	}

	var rows []struct {
		Snapshot, Verified, Notes string
		Archives                  []string
	}
	e2e.DecodeJSON(t, e2e.MustCairn(t, "--store", st, "snapshots", "--json"), &rows)
	firstNotes := notes[:strings.IndexByte(notes, '\n')] + " …" // the first line, as the listing shows it
	if len(rows) != 3 || rows[0].Verified != state || rows[0].Notes != firstNotes || len(rows[0].Archives) != len(hostileText) {
		t.Fatalf("snapshots --json: %+v", rows)
	}
	for _, n := range hostileText {
		if !strings.Contains(strings.Join(rows[0].Archives, "/"), n+".blob") {
			t.Errorf("snapshots --json: archive %q missing in %q", n, rows[0].Archives)
		}
	}
}

// escapeStore is a store of its own with three snapshots of blobs named
// with hostileText: the first with notes and a verify state of hostile
// text (returned), the third with a manifest that does not decode (its
// error quotes a file name).
func escapeStore(t *testing.T) (st, first, second, broken, notes, state string) {
	st = e2e.OwnStore(t, "cairn-e2e-esc-")
	dir := t.TempDir()
	e2e.Write(t, filepath.Join(dir, "b"), "blob data", 0o644)
	e2e.Write(t, filepath.Join(dir, "c"), "other data", 0o644)
	backup := func(at, content string) string {
		args := []string{"--store", st, "backup", "--type", "host", "--id", "esc", "--time", at, "--no-sync", "-q", "--json"}
		for _, n := range hostileText {
			args = append(args, n+".blob:"+filepath.Join(dir, content))
		}
		var sum struct{ Snapshot string }
		e2e.DecodeJSON(t, e2e.MustCairn(t, args...), &sum)
		return sum.Snapshot
	}
	first, second, broken = backup("2024-05-01T10:00:00Z", "b"), backup("2024-05-02T10:00:00Z", "c"), backup("2024-05-03T10:00:00Z", "b")
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	update := func(snap string, fn func(*store.Manifest)) {
		r, err := store.ParseRef(snap)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UpdateManifest(context.Background(), r.Snapshot, func(m *store.Manifest) error { fn(m); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	notes, state = strings.Join(hostileText, "|"), "ok\x1b[31mEVIL"+strings.Join(hostileText, "")
	update(first, func(m *store.Manifest) {
		raw, _ := json.Marshal(notes)
		m.Unprotected["notes"] = raw
		m.SetVerifyState(store.VerifyState{State: state, UPID: "UPID\x1b[2J"})
	})
	update(broken, func(m *store.Manifest) { m.Files[0].CryptMode = "bad\x1b[31m" })
	return st, first, second, broken, notes, state
}
