package test

import (
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestHabitHints: a command or flag of restic, borg or
// proxmox-backup-client that cairn does not have is still bad usage
// (exit 2), with one line naming the cairn command that does it.
func TestHabitHints(t *testing.T) {
	st := e2e.SharedStore(t)
	for _, c := range []struct {
		args []string
		hint string
	}{
		{[]string{"forget", "--keep-daily", "3", "host/web"}, "did you mean `cairn prune --keep-daily`?"},
		{[]string{"forget", "--prune", "host/web"}, "did you mean `cairn prune --keep-… GROUP`?"},
		{[]string{"check"}, "did you mean `cairn verify`?"},
		{[]string{"check", "--read-data"}, "did you mean `cairn verify`?"},
		{[]string{"stats"}, "did you mean `cairn du`?"},
		{[]string{"copy", "host/web"}, "did you mean `cairn sync --from STORE`?"},
		{[]string{"create", "x"}, "did you mean `cairn backup`?"},
		{[]string{"extract", "x"}, "did you mean `cairn restore`?"},
		{[]string{"list"}, "did you mean `cairn snapshots`?"},
		{[]string{"info"}, "did you mean `cairn du`?"},
		{[]string{"compact"}, "did you mean `cairn gc`?"},
		{[]string{"delete", "host/web/latest"}, "did you mean `cairn forget`?"},
		{[]string{"catalog", "dump", "host/web/latest"}, "did you mean `cairn ls`?"},
		{[]string{"garbage-collect"}, "did you mean `cairn gc`?"},
		{[]string{"key", "passwd"}, "did you mean `cairn key change-passphrase`?"},
		{[]string{"restore", "host/web/latest", "--target", "/tmp/x"}, "did you mean `cairn restore SNAPSHOT ARCHIVE TARGET`?"},
		{[]string{"backup", "--backup-id", "web", "x.pxar:/etc"}, "did you mean `cairn backup --id`?"},
		{[]string{"snapshots", "--repo", "/srv/restic"}, "did you mean `--store DIR`?"},
	} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st}, c.args...)...)
		if r.Code != 2 || !strings.Contains(r.Stderr, "cairn: "+c.hint+"") {
			t.Errorf("cairn %q: exit %d, want 2 with %q\nstderr: %s", c.args, r.Code, c.hint, r.Stderr)
		}
		if n := strings.Count(r.Stderr, "did you mean"); n != 1 {
			t.Errorf("cairn %q: %d suggestions, want the one hint line:\n%s", c.args, n, r.Stderr)
		}
	}
	// Nothing to suggest: no hint line, the help is pointed to as before.
	if r := e2e.Cairn(t, nil, "--store", st, "frobnicate"); r.Code != 2 || strings.Contains(r.Stderr, "did you mean `") || !strings.Contains(r.Stderr, "--help") {
		t.Errorf("unknown command: exit %d\n%s", r.Code, r.Stderr)
	}
}
