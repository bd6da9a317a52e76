package test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBackupIDFromHostName: --type host without --id takes the host
// name up to its first dot; one that is no valid backup id is refused
// (exit 2) naming it. The host name is set in a UTS namespace.
func TestBackupIDFromHostName(t *testing.T) {
	if err := exec.Command("unshare", "--user", "--uts", "--map-root-user", "true").Run(); err != nil {
		t.Skipf("no user and UTS namespaces: %v", err)
	}
	st := sharedStore(t)
	ns, _ := uniqueNS("hostid")
	f := filepath.Join(t.TempDir(), "f")
	write(t, f, "hostid", 0o644)
	run := func(host string) result {
		cmd := exec.Command("unshare", "--user", "--uts", "--map-root-user", "sh", "-c",
			`printf %s "$1" > /proc/sys/kernel/hostname && shift && exec "$@"`, "sh", host,
			binPath, "--store", st, "backup", "-q", "--no-sync", "--ns", ns, "f.blob:"+f)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{code: code, stdout: out.String(), stderr: errb.String()}
	}
	if r := run("web1.example.com"); r.code != 0 {
		t.Fatalf("backup without --id on host web1.example.com: exit %d\n%s", r.code, r.stderr)
	}
	if got := habitsList(t, st, "--ns", ns, "host/web1"); len(got) != 1 {
		t.Errorf("group host/web1: %q, want one snapshot", got)
	}
	for _, bad := range []string{"bad host", "-dash"} {
		r := run(bad)
		if r.code != 2 || !strings.Contains(r.stderr, `host name "`+bad+`" is not a valid backup id`) || !strings.Contains(r.stderr, "give --id") {
			t.Errorf("host name %q: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}
	if r := cairn(t, nil, "--store", st, "backup", "--ns", ns, "--type", "vm", "f.blob:"+f); r.code != 2 || !strings.Contains(r.stderr, "--id is required with --type vm") {
		t.Errorf("--type vm without --id: exit %d\n%s", r.code, r.stderr)
	}
}
