package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestRunnersAgree: a command run in-process (cli.Run, as the tests run
// most commands) and the same command run by the binary exit alike and
// print the same standard output and standard error: reads of a store,
// errors with their hints, usage errors, help, completion scripts,
// variables passed in env, standard input.
func TestRunnersAgree(t *testing.T) {
	t.Parallel()
	st := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-runners-"), "store") // du sums the whole store
	e2e.MustCairn(t, "--store", st, "init")
	ns, seed := e2e.UniqueNS("runners")
	img := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(img, e2e.RandBytes(300<<10, seed), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2e.MustCairn(t, "--store", st, "backup", "--ns", ns, "--type", "vm", "--id", "1", "--no-sync", "--json", "disk.img:"+img)
	var sum struct{ Snapshot string }
	e2e.DecodeJSON(t, r, &sum)
	snap := sum.Snapshot
	runs := []struct {
		env   []string
		stdin string
		args  []string
	}{
		{args: []string{"--help"}},
		{args: []string{"completion", "zsh"}},
		{args: []string{"snapshots", "--no-such-flag"}},
		{args: []string{"--store", filepath.Join(t.TempDir(), "none"), "snapshots"}},
		{env: []string{"CAIRN_STORE=" + filepath.Join(t.TempDir(), "none")}, args: []string{"snapshots"}},
		{args: []string{"--store", st, "snapshots", "--json", snap}},
		{env: []string{"CAIRN_STORE=" + st}, args: []string{"ls", snap}},
		{args: []string{"--store", st, "cat", snap, "disk.img"}},
		{args: []string{"--store", st, "cat", snap, "no-such.img"}},
		{stdin: "from stdin\n", args: []string{"--store", st, "notes", snap, "-"}},
		{args: []string{"--store", st, "notes", snap}},
		{args: []string{"--store", st, "du", "--json", snap}},
	}
	for _, c := range runs {
		var stdin []byte
		if c.stdin != "" {
			stdin = []byte(c.stdin)
		}
		bin := e2e.CairnBinary(t, c.env, stdin, c.args...)
		in := e2e.RunInProcess(t.Context(), c.env, stdin, c.args...)
		if in != bin {
			t.Errorf("cairn %s (env %q):\nbinary:     exit %d\n%s\n%s\nin-process: exit %d\n%s\n%s", strings.Join(c.args, " "), c.env,
				bin.Code, e2e.Tail(bin.Stdout), bin.Stderr, in.Code, e2e.Tail(in.Stdout), in.Stderr)
		}
	}
}
