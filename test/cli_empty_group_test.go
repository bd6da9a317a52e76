package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// A failed first backup leaves no group behind, and an empty group
// (killed at the wrong moment, or made by hand) is listed by `cairn
// snapshots` as the mount shows it, with how to remove it (issue 30,
// point 9: the mount showed host/empty, snapshots did not).
func TestEmptyGroupListed(t *testing.T) {
	t.Parallel() // a store of its own
	e2e.NeedFUSE(t)
	st := e2e.OwnStore(t, "cairn-e2e-")

	r := e2e.CairnStdin(t, nil, nil, "--store", st, "backup", "--type", "host", "--id", "first", "disk.img:-")
	if r.Code != 1 || !strings.Contains(r.Stderr, "nothing kept") {
		t.Fatalf("empty image: exit %d: %s", r.Code, r.Stderr)
	}
	if _, err := os.Lstat(filepath.Join(st, "host", "first")); !os.IsNotExist(err) {
		t.Fatalf("a failed first backup left its group: %v", err)
	}

	if err := os.MkdirAll(filepath.Join(st, "host", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := e2e.MountStore(t, st)
	if got := e2e.Names(t, filepath.Join(mnt, "host")); !slices.Contains(got, "empty") {
		t.Fatalf("mount's host/: %v", got)
	}
	for _, args := range [][]string{{"snapshots"}, {"snapshots", "--groups"}, {"snapshots", "host/empty"}} {
		out := e2e.MustCairn(t, append([]string{"--store", st}, args...)...).Stdout
		if !strings.Contains(out, "group host/empty: no snapshots") || !strings.Contains(out, "cairn forget --group host/empty") {
			t.Fatalf("%v:\n%s", args, out)
		}
	}
	var groups []struct {
		Group     string `json:"group"`
		Snapshots int    `json:"snapshots"`
	}
	e2e.DecodeJSON(t, e2e.MustCairn(t, "--store", st, "snapshots", "--groups", "--json"), &groups)
	if len(groups) != 1 || groups[0].Group != "host/empty" || groups[0].Snapshots != 0 {
		t.Fatalf("--groups --json: %+v", groups)
	}
	e2e.MustCairn(t, "--store", st, "forget", "--group", "host/empty")
	if out := e2e.MustCairn(t, "--store", st, "snapshots").Stdout; !strings.HasPrefix(out, "no snapshots\n") {
		t.Fatalf("after forget:\n%q", out)
	}
}
