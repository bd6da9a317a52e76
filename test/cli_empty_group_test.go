package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A failed first backup leaves no group behind, and an empty group
// (killed at the wrong moment, or made by hand) is listed by `cairn
// snapshots` as the mount shows it, with how to remove it (issue 30,
// point 9: the mount showed host/empty, snapshots did not).
func TestEmptyGroupListed(t *testing.T) {
	t.Parallel() // a store of its own
	needFUSE(t)
	st := filepath.Join(tmpfsDir(t, "cairn-e2e-"), "store")
	mustCairn(t, "--store", st, "init")

	r := cairnStdin(t, nil, nil, "--store", st, "backup", "--type", "host", "--id", "first", "disk.img:-")
	if r.code != 1 || !strings.Contains(r.stderr, "nothing kept") {
		t.Fatalf("empty image: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Lstat(filepath.Join(st, "host", "first")); !os.IsNotExist(err) {
		t.Fatalf("a failed first backup left its group: %v", err)
	}

	if err := os.MkdirAll(filepath.Join(st, "host", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := mountStore(t, st)
	if got := names(t, filepath.Join(mnt, "host")); !slices.Contains(got, "empty") {
		t.Fatalf("mount's host/: %v", got)
	}
	for _, args := range [][]string{{"snapshots"}, {"snapshots", "--groups"}, {"snapshots", "host/empty"}} {
		out := mustCairn(t, append([]string{"--store", st}, args...)...).stdout
		if !strings.Contains(out, "group host/empty: no snapshots") || !strings.Contains(out, "cairn forget --group host/empty") {
			t.Fatalf("%v:\n%s", args, out)
		}
	}
	var groups []struct {
		Group     string `json:"group"`
		Snapshots int    `json:"snapshots"`
	}
	decodeJSON(t, mustCairn(t, "--store", st, "snapshots", "--groups", "--json"), &groups)
	if len(groups) != 1 || groups[0].Group != "host/empty" || groups[0].Snapshots != 0 {
		t.Fatalf("--groups --json: %+v", groups)
	}
	mustCairn(t, "--store", st, "forget", "--group", "host/empty")
	if out := mustCairn(t, "--store", st, "snapshots").stdout; !strings.HasPrefix(out, "no snapshots\n") {
		t.Fatalf("after forget:\n%q", out)
	}
}
