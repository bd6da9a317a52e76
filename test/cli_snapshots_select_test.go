package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// habitsBackup backs up a small blob as ns/NS/host/ID at tm.
func habitsBackup(t *testing.T, st, ns, id, tm string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "f")
	e2e.Write(t, f, "data of "+id+tm, 0o644)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--no-sync", "--ns", ns, "--type", "host", "--id", id, "--time", tm, "f.blob:"+f)
	return "ns/" + ns + "/host/" + id + "/" + tm
}

type habitsRow struct {
	Snapshot string `json:"snapshot"`
	Finished bool   `json:"finished"`
	Notes    string `json:"notes"`
}

func habitsList(t *testing.T, st string, args ...string) []string {
	t.Helper()
	r := e2e.Cairn(t, nil, append([]string{"--store", st, "snapshots", "--json"}, args...)...)
	var rows []habitsRow
	e2e.DecodeJSON(t, r, &rows)
	var out []string
	for _, row := range rows {
		out = append(out, row.Snapshot)
	}
	return out
}

// TestSnapshotsSelect: snapshots takes groups (all their snapshots,
// unfinished too) and snapshots, each listed once, sorted.
func TestSnapshotsSelect(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, _ := e2e.UniqueNS("snapsel")
	a1 := habitsBackup(t, st, ns, "a", "2024-05-01T10:00:00Z")
	a2 := habitsBackup(t, st, ns, "a", "2024-05-02T10:00:00Z")
	b1 := habitsBackup(t, st, ns, "b", "2024-05-01T10:00:00Z")
	habitsBackup(t, st, ns, "c", "2024-05-01T10:00:00Z")
	unf := filepath.Join(st, "ns", ns, "host", "a", "2024-05-03T10:00:00Z")
	if err := os.Mkdir(unf, 0o755); err != nil {
		t.Fatal(err)
	}
	a3 := "ns/" + ns + "/host/a/2024-05-03T10:00:00Z"
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--ns", ns, "host/a"}, []string{a1, a2, a3}},
		{[]string{"ns/" + ns + "/host/a"}, []string{a1, a2, a3}},
		{[]string{"--ns", ns, "host/b", "host/a/2024-05-01T10:00:00Z"}, []string{a1, b1}},
		{[]string{"--ns", ns, "host/a/latest", "host/a"}, []string{a1, a2, a3}},
		{[]string{"--ns", ns, "host/b/latest"}, []string{b1}},
	} {
		if got := habitsList(t, st, c.args...); strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("snapshots %q: %q, want %q", c.args, got, c.want)
		}
	}
	r := e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns, "host/a")
	if strings.Contains(r.Stdout, "host/b") || !strings.Contains(r.Stdout, "group ns/"+ns+"/host/a: 3 snapshot(s)") {
		t.Errorf("snapshots host/a:\n%s", r.Stdout)
	}
	for _, args := range [][]string{{"--ns", ns, "host/nope"}, {"--ns", ns, "host/a/2020-01-01T00:00:00Z"}} {
		if r := e2e.Cairn(t, nil, append([]string{"--store", st, "snapshots"}, args...)...); r.Code != 1 || !strings.Contains(r.Stderr, "not found") {
			t.Errorf("snapshots %q: exit %d, want 1 (not found)\n%s", args, r.Code, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "snapshots", "--ns", ns, "ns/other/host/a"); r.Code != 2 {
		t.Errorf("snapshots of another namespace than --ns: exit %d, want 2\n%s", r.Code, r.Stderr)
	}
}
