package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkInstalledUnits checks the systemd units `make install
// DESTDIR=dest PREFIX=/usr` staged: each names /usr/bin/cairn and no
// placeholder or other path of cairn, cairn-serve.service is Type=notify
// with a reload, and systemd-analyze verify (when there is one) accepts
// them without a warning, with the binary's path pointed at the staged binary (the
// staged unit names the path it will have once installed).
func checkInstalledUnits(t *testing.T, dest string) {
	t.Helper()
	dir := filepath.Join(dest, "usr/lib/systemd/system")
	verify := filepath.Join(t.TempDir(), "units")
	if err := os.Mkdir(verify, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"cairn-serve.service", "cairn-mount@.service"} {
		data, err := os.ReadFile(filepath.Join(dir, u))
		if err != nil {
			t.Errorf("make install: %v", err)
			continue
		}
		unit := string(data)
		if !strings.Contains(unit, "ExecStart=/usr/bin/cairn ") || strings.Contains(unit, "@BINDIR@") || strings.Contains(unit, "/usr/local/bin") {
			t.Errorf("%s does not name /usr/bin/cairn alone:\n%s", u, unit)
		}
		if u == "cairn-serve.service" {
			for _, want := range []string{"Type=notify\n", "ExecReload=kill -HUP $MAINPID\n", "ExecStart=/usr/bin/cairn serve "} {
				if !strings.Contains(unit, want) {
					t.Errorf("%s lacks %q", u, want)
				}
			}
		}
		staged := strings.ReplaceAll(unit, "/usr/bin/cairn", filepath.Join(dest, "usr/bin/cairn"))
		if err := os.WriteFile(filepath.Join(verify, u), []byte(staged), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("no systemd-analyze: the units' syntax is not checked")
		return
	}
	// An instance of the template, as systemctl enable would make it.
	inst := filepath.Join(verify, "cairn-mount@mnt-backup.service")
	if err := os.Symlink(filepath.Join(verify, "cairn-mount@.service"), inst); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("systemd-analyze", "verify", "--man=no", "--generators=no",
		filepath.Join(verify, "cairn-serve.service"), inst)
	// It warns of what it ignores (a misspelt value, an unknown key)
	// and still exits 0: any word from it is a failure.
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}
