package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// A user who cannot open /dev/fuse, or asks --allow-other where
// fuse.conf does not allow it, is told what is wrong and what the admin
// changes, not fusermount3's "Permission denied" and a raw wait status.
// Each case runs in a private mount namespace (unshare) whose /dev/fuse
// and /etc/fuse.conf are bind-mounted stand-ins, as user nobody.
func TestMountFUSEAccess(t *testing.T) {
	e2e.NeedFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: a private mount namespace with stand-ins")
	}
	for _, tool := range []string{"unshare", "setpriv"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s (util-linux) not installed", tool)
		}
	}
	// a directory nobody can use: the binary, a store, a mountpoint
	top, err := os.MkdirTemp("", "cairn-fuse-access-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(top)
	bin := filepath.Join(top, "cairn")
	data, err := os.ReadFile(e2e.Binary())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	// the store on a tmpfs where there is one: init makes 65,536
	// directories, and removing them from a loaded disk took a minute
	fast, err := os.MkdirTemp(storetest.FastTempDir(), "cairn-fuse-access-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(fast)
	st, mnt := filepath.Join(fast, "store"), filepath.Join(top, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{top, fast} {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{mnt} {
		if err := os.Chown(p, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	asNobody := "setpriv --reuid=65534 --regid=65534 --clear-groups "
	if out, err := exec.Command("sh", "-c", "install -d -o 65534 -g 65534 "+st+".d && "+asNobody+bin+" --store "+st+".d/s init").CombinedOutput(); err != nil {
		t.Fatalf("init as nobody: %v: %s", err, out)
	}
	store := st + ".d/s"
	for _, c := range []struct {
		name, mode, conf, args string
		want                   []string
	}{
		{"device not open to the user", "0600", "user_allow_other", "",
			[]string{"this user cannot open /dev/fuse", "mode 0600", "chmod 0666 /dev/fuse"}},
		{"allow-other not allowed", "0666", "# nothing", "--allow-other",
			[]string{"--allow-other needs the line user_allow_other in /etc/fuse.conf"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			script := `set -e
mount -t tmpfs -o dev,mode=0755 none "$T"
mknod "$T/fuse" c 10 229 && chmod ` + c.mode + ` "$T/fuse"
printf '%s\n' "$CONF" > "$T/fuse.conf"
mount --bind "$T/fuse" /dev/fuse
mount --bind "$T/fuse.conf" /etc/fuse.conf 2>/dev/null || true
exec ` + asNobody + bin + ` --store ` + store + ` mount ` + c.args + ` ` + mnt
			stand := t.TempDir()
			cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
			cmd.Env = append(os.Environ(), "T="+stand, "CONF="+c.conf)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil {
				t.Fatalf("mount succeeded: %s", stderr.String())
			}
			for _, w := range c.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			if strings.Contains(stderr.String(), "exited with code") {
				t.Errorf("a raw wait status reached the user:\n%s", stderr.String())
			}
		})
	}
}
