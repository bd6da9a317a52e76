package e2e

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInProcess: the commands that need a process of their own (mount,
// umount) and those given a variable cli.Run does not take from its env
// run in the binary; the rest in-process, unless CAIRN_E2E_RUNNER=binary.
func TestInProcess(t *testing.T) {
	cases := []struct {
		env  []string
		args []string
		want bool
	}{
		{nil, []string{"--store", "mount", "snapshots"}, true},
		{nil, []string{"--store=s", "-v", "mount", "m"}, false},
		{nil, []string{"--log-format", "json", "umount", "m"}, false},
		{[]string{"CAIRN_KEYFILE=k", "CAIRN_STORE=s"}, []string{"backup"}, true},
		{[]string{"AWS_ACCESS_KEY_ID=a"}, []string{"snapshots"}, false},
		{[]string{"CAIRN_PROGRESS_INTERVAL=1ms"}, []string{"backup"}, false},
	}
	for _, c := range cases {
		if got := inProcess(c.env, c.args); got != c.want {
			t.Errorf("inProcess(%q, %q) = %v, want %v", c.env, c.args, got, c.want)
		}
	}
	remote := t.TempDir()
	if err := os.WriteFile(filepath.Join(remote, "remote.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ env, args []string }{
		{nil, []string{"--store", remote, "snapshots"}},
		{nil, []string{"--store=" + remote, "snapshots"}},
		{nil, []string{"sync", "--from", remote}},
		{[]string{"CAIRN_STORE=" + remote}, []string{"snapshots"}},
		{nil, []string{"init", "--s3", "s3://b/p"}},
		{nil, []string{"key", "change-passphrase", "--password-file", "/dev/stdin", "k"}},
		{nil, []string{"backup", "d.img:/dev/fd/3"}},
	} {
		if inProcess(c.env, c.args) {
			t.Errorf("in-process: %q %q", c.env, c.args)
		}
	}
	t.Setenv(RunnerEnv, "binary")
	if inProcess(nil, []string{"snapshots"}) {
		t.Errorf("%s=binary: snapshots in-process", RunnerEnv)
	}
}
