package test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestBackupIDFromHostName: --type host without --id takes the host
// name up to its first dot; one that is no valid backup id is refused
// (exit 2) naming it. The host name is set in a UTS namespace.
func TestBackupIDFromHostName(t *testing.T) {
	if err := exec.Command("unshare", "--user", "--uts", "--map-root-user", "true").Run(); err != nil {
		t.Skipf("no user and UTS namespaces: %v", err)
	}
	st := e2e.SharedStore(t)
	ns, _ := e2e.UniqueNS("hostid")
	f := filepath.Join(t.TempDir(), "f")
	e2e.Write(t, f, "hostid", 0o644)
	run := func(host string) e2e.Result {
		cmd := exec.Command("unshare", "--user", "--uts", "--map-root-user", "sh", "-c",
			`printf %s "$1" > /proc/sys/kernel/hostname && shift && exec "$@"`, "sh", host,
			e2e.Binary(), "--store", st, "backup", "-q", "--no-sync", "--ns", ns, "f.blob:"+f)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return e2e.Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
	}
	if r := run("web1.example.com"); r.Code != 0 {
		t.Fatalf("backup without --id on host web1.example.com: exit %d\n%s", r.Code, r.Stderr)
	}
	if got := habitsList(t, st, "--ns", ns, "host/web1"); len(got) != 1 {
		t.Errorf("group host/web1: %q, want one snapshot", got)
	}
	for _, bad := range []string{"bad host", "-dash"} {
		r := run(bad)
		if r.Code != 2 || !strings.Contains(r.Stderr, `host name "`+bad+`" is not a valid backup id`) || !strings.Contains(r.Stderr, "give --id") {
			t.Errorf("host name %q: exit %d, want 2\n%s", bad, r.Code, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "backup", "--ns", ns, "--type", "vm", "f.blob:"+f); r.Code != 2 || !strings.Contains(r.Stderr, "--id is required with --type vm") {
		t.Errorf("--type vm without --id: exit %d\n%s", r.Code, r.Stderr)
	}
}
