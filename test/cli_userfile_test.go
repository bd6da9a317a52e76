package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/userfile/userfiletest"
	"github.com/cairnfs/cairn/test/e2e"
)

// Every small file a user names (key files, passphrase files, the master
// key's PEM files, a wrapped key, paperkey's input) that is not a regular
// file is refused at once, by name and kind, by the real binary: a FIFO
// no writer opens used to block the open forever (and ignore the first
// SIGTERM), /dev/zero to be read until memory ran out.

func TestCLIUserFilesNotRegular(t *testing.T) {
	t.Parallel()
	st := e2e.SharedStore(t)
	dir := t.TempDir()
	td, _ := filepath.Abs("../crypt/keyfile/testdata")
	pem, blob := filepath.Join(td, "master-private.pem"), filepath.Join(td, "rsa-encrypted.key.blob")
	pw, mpw := e2e.WritePass(t, dir, "pw", "correct horse battery"), e2e.WritePass(t, dir, "mpw", "master pass")
	key, plain := filepath.Join(dir, "scrypt.key"), filepath.Join(dir, "none.key")
	writeScryptKey(t, key, "correct horse battery")
	e2e.MustCairn(t, "key", "create", "--kdf", "none", plain)
	img := writeFile(t, filepath.Join(dir, "a.img"), e2e.RandBytes(4096, 1))
	out := filepath.Join(dir, "out.key") // never written: every run fails first

	for _, c := range []struct {
		name string
		run  func(bad string) (env, args []string)
	}{
		{"key show", func(bad string) ([]string, []string) { return nil, []string{"key", "show", bad} }},
		{"cat --keyfile", func(bad string) ([]string, []string) {
			return nil, []string{"--store", st, "cat", "--keyfile", bad, "host/none/latest", "a.img"}
		}},
		{"CAIRN_KEYFILE", func(bad string) ([]string, []string) {
			return []string{"CAIRN_KEYFILE=" + bad}, []string{"--store", st, "verify", "host/none/latest"}
		}},
		{"CAIRN_KEY_PASSWORD_FILE", func(bad string) ([]string, []string) {
			return []string{"CAIRN_KEY_PASSWORD_FILE=" + bad}, []string{"--store", st, "cat", "--keyfile", key, "host/none/latest", "a.img"}
		}},
		{"change-passphrase --password-file", func(bad string) ([]string, []string) {
			return nil, []string{"key", "change-passphrase", "--password-file", bad, "--new-password-file", pw, key}
		}},
		{"change-passphrase --new-password-file", func(bad string) ([]string, []string) {
			return nil, []string{"key", "change-passphrase", "--password-file", pw, "--new-password-file", bad, key}
		}},
		{"key create --password-file", func(bad string) ([]string, []string) {
			return nil, []string{"key", "create", "--password-file", bad, out}
		}},
		{"create-master --master-password-file", func(bad string) ([]string, []string) {
			return nil, []string{"key", "create-master", "--master-password-file", bad, filepath.Join(dir, "master")}
		}},
		{"recover --master-key", func(bad string) ([]string, []string) {
			return nil, []string{"key", "recover", "--master-key", bad, "--master-password-file", mpw, blob, out}
		}},
		{"recover --master-password-file", func(bad string) ([]string, []string) {
			return nil, []string{"key", "recover", "--master-key", pem, "--master-password-file", bad, blob, out}
		}},
		{"recover BLOB", func(bad string) ([]string, []string) {
			return nil, []string{"key", "recover", "--master-key", pem, "--master-password-file", mpw, bad, out}
		}},
		{"paperkey", func(bad string) ([]string, []string) { return nil, []string{"key", "paperkey", bad} }},
		{"backup --master-pubkey", func(bad string) ([]string, []string) {
			return nil, []string{"--store", st, "backup", "--type", "host", "--id", "userfile", "--keyfile", plain, "--master-pubkey", bad, "a.img:" + img}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for bad, kind := range userfiletest.NotRegular(t) {
				env, args := c.run(bad)
				r := e2e.CairnBoundedEnv(t, env, args...)
				want := bad + ": is " + kind + ", not a regular file"
				if r.Code != 1 || !strings.Contains(r.Stderr, want) {
					t.Errorf("%s: exit %d, want 1 and %q:\n%s", bad, r.Code, want, r.Stderr)
				}
			}
		})
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s was written", out)
	}
}

// TestCLIUserFilesRegularAndPipe: a regular file, a symlink to one and an
// anonymous pipe (/dev/stdin on a pipe, as `<(…)` gives) still work.
func TestCLIUserFilesRegularAndPipe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "scrypt.key")
	writeScryptKey(t, key, "correct horse battery")
	link := filepath.Join(dir, "link.key")
	if err := os.Symlink(key, link); err != nil {
		t.Fatal(err)
	}
	fp := showKey(t, key).Fingerprint
	if s := showKey(t, link); s.Fingerprint != fp {
		t.Errorf("key show through a symlink: %+v", s)
	}
	pw2 := e2e.WritePass(t, dir, "pw2", "second passphrase")
	r := e2e.CairnStdin(t, nil, []byte("correct horse battery\n"),
		"key", "change-passphrase", "--password-file", "/dev/stdin", "--new-password-file", pw2, key)
	if r.Code != 0 {
		t.Fatalf("passphrase from /dev/stdin on a pipe: exit %d\n%s", r.Code, r.Stderr)
	}
	data, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	r = e2e.CairnStdin(t, []string{"PATH=" + t.TempDir()}, data, "key", "paperkey", "/dev/stdin") // no qrencode
	if r.Code != 0 || !strings.Contains(r.Stdout, "-----BEGIN PROXMOX BACKUP KEY-----") {
		t.Errorf("paperkey of a key file on a pipe: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if s := showKey(t, key); s.Fingerprint != fp {
		t.Errorf("after change-passphrase: %+v", s)
	}
}
