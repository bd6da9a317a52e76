package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// The `cairn key` commands with the real binary: create, show,
// change-passphrase; the key files are PBS's (the Python implementation
// in crypt/keyfile/testdata loads them when it can run).

type keyShow struct {
	Path, KDF, Created, Modified, Fingerprint, Hint string
}

func showKey(t *testing.T, path string) keyShow {
	t.Helper()
	r := e2e.MustCairn(t, "key", "show", "--json", path)
	var s keyShow
	if err := json.Unmarshal([]byte(r.Stdout), &s); err != nil {
		t.Fatalf("key show --json: %v\n%s", err, r.Stdout)
	}
	return s
}

func TestCLIKeyCreateShowChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pw1 := e2e.WritePass(t, dir, "pw1", "first passphrase")
	pw2 := e2e.WritePass(t, dir, "pw2", "second passphrase")
	key := filepath.Join(dir, "a.key")

	r := e2e.MustCairn(t, "key", "create", "--kdf", "pbkdf2", "--hint", "the first", "--password-file", pw1, key)
	fi, err := os.Stat(key)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	s := showKey(t, key)
	if s.KDF != "pbkdf2" || len(s.Fingerprint) != 95 || !strings.Contains(r.Stdout, s.Fingerprint) {
		t.Errorf("show: %+v, create said %q", s, r.Stdout)
	}
	var raw map[string]any
	b, _ := os.ReadFile(key)
	if err := json.Unmarshal(b, &raw); err != nil || raw["kdf"].(map[string]any)["PBKDF2"] == nil {
		t.Errorf("key file is not PBS's JSON: %s", b)
	}
	text := e2e.MustCairn(t, "key", "show", key).Stdout
	if !strings.Contains(text, "fingerprint: "+s.Fingerprint) || !strings.Contains(text, "kdf:         pbkdf2") {
		t.Errorf("key show:\n%s", text)
	}

	// Never overwrite: the file stays as it was.
	r = e2e.Cairn(t, nil, "key", "create", "--kdf", "pbkdf2", "--password-file", pw1, key)
	if after, _ := os.ReadFile(key); r.Code == 0 || string(after) != string(b) || !strings.Contains(r.Stderr, key) {
		t.Errorf("create over an existing file: exit %d, %s", r.Code, r.Stderr)
	}

	// Wrong passphrase: an error naming the file, the file unchanged.
	r = e2e.Cairn(t, []string{"CAIRN_KEY_PASSWORD_FILE=" + pw2}, "key", "change-passphrase", "--new-password-file", pw1, key)
	if r.Code == 0 || !strings.Contains(r.Stderr, key) || !strings.Contains(r.Stderr, "wrong passphrase") || !strings.Contains(r.Stderr, "the first") {
		t.Errorf("wrong passphrase: exit %d, %s", r.Code, r.Stderr)
	}

	// The environment variables name the passphrase files.
	r = e2e.Cairn(t, []string{"CAIRN_KEY_PASSWORD_FILE=" + pw1, "CAIRN_KEY_NEW_PASSWORD_FILE=" + pw2},
		"key", "change-passphrase", "--kdf", "scrypt", key)
	if r.Code != 0 {
		t.Fatalf("change-passphrase: exit %d %s", r.Code, r.Stderr)
	}
	s2 := showKey(t, key)
	if s.Hint != "the first" || s2.Hint != "" || s2.KDF != "scrypt" || s2.Fingerprint != s.Fingerprint || s2.Created != s.Created {
		t.Errorf("after change: %+v, before %+v", s2, s)
	}
	// The new passphrase opens it (the scrypt derivation at PBS's
	// parameters, written and read by the binary), and then the old one
	// no longer does: tried on the pbkdf2 file, since each scrypt
	// derivation at N=65536 is 2.6 CPU-s under -race.
	e2e.MustCairn(t, "key", "change-passphrase", "--kdf", "pbkdf2", "--password-file", pw2, "--new-password-file", pw1, key)
	if fi, _ := os.Stat(key); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after change: %v", fi.Mode())
	}
	if r := e2e.Cairn(t, nil, "key", "change-passphrase", "--kdf", "pbkdf2", "--password-file", pw2, "--new-password-file", pw2, key); r.Code == 0 {
		t.Error("the old passphrase still opens the key file")
	}
	pythonLoads(t, key, "first passphrase", s.Fingerprint)
}

func TestCLIKeyNoneAndRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "plain.key")
	e2e.MustCairn(t, "key", "create", "--kdf", "none", key)
	if s := showKey(t, key); s.KDF != "none" || s.Fingerprint == "" {
		t.Errorf("none: %+v", s)
	}
	// No terminal and no passphrase file: a clear refusal, no file.
	k2 := filepath.Join(dir, "b.key")
	r := e2e.CairnStdin(t, nil, []byte("typed passphrase\n"), "key", "create", k2)
	if r.Code == 0 || !strings.Contains(r.Stderr, "CAIRN_KEY_PASSWORD_FILE") {
		t.Errorf("create without a passphrase source: exit %d %s", r.Code, r.Stderr)
	}
	if _, err := os.Stat(k2); err == nil {
		t.Error("a key file was written without a passphrase")
	}
	if r := e2e.Cairn(t, nil, "key", "create", "--kdf", "argon2", k2); r.Code != 2 {
		t.Errorf("--kdf argon2: exit %d, want 2: %s", r.Code, r.Stderr)
	}
	short := e2e.WritePass(t, dir, "short", "abc")
	if r := e2e.Cairn(t, nil, "key", "create", "--password-file", short, k2); r.Code == 0 || !strings.Contains(r.Stderr, "too short") {
		t.Errorf("short passphrase: exit %d %s", r.Code, r.Stderr)
	}
	// A hostile key file: an error naming it, no panic.
	bad := filepath.Join(dir, "bad.key")
	os.WriteFile(bad, []byte(`{"kdf":{"Scrypt":{"n":1099511627776,"r":8,"p":1,"salt":""}},"created":"2026-12-01T17:30:00Z","modified":"2026-12-01T17:30:00Z","data":"AAAA"}`), 0o600)
	r = e2e.Cairn(t, nil, "key", "show", bad)
	if r.Code == 0 || !strings.Contains(r.Stderr, bad) || !strings.Contains(r.Stderr, "out of bounds") || strings.Contains(r.Stderr, "panic") {
		t.Errorf("hostile key file: exit %d %s", r.Code, r.Stderr)
	}
}

// pythonLoads has the independent Python implementation decrypt a key file
// cairn wrote; skipped without python3 and cryptography.
func pythonLoads(t *testing.T, key, pass, fingerprint string) {
	t.Helper()
	if exec.Command("python3", "-c", "import cryptography").Run() != nil {
		t.Log("python3 with cryptography is not installed: skipping its check of the key file")
		return
	}
	cmd := exec.Command("python3", "../crypt/keyfile/testdata/pbs_keyfile.py", "load", key)
	cmd.Stdin = strings.NewReader(pass)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), fingerprint) {
		t.Errorf("python load: %v %s", err, out)
	}
}

// TestCLIKeyTerminalPrompt types the passphrase (twice) at a terminal: a
// pseudo-terminal Python's pty module opens (skipped without python3).
func TestCLIKeyTerminalPrompt(t *testing.T) {
	t.Parallel()
	needTerminal(t)
	key := filepath.Join(t.TempDir(), "tty.key")
	out, err := atTerminal([][2]string{{"passphrase for the new key: ", "typed passphrase"}, {"(again): ", "typed passphrase"}},
		e2e.Binary(), "key", "create", "--kdf", "pbkdf2", key)
	if err != nil || !strings.Contains(string(out), "(again)") || strings.Contains(string(out), "typed passphrase") {
		t.Fatalf("create at a terminal: %v\n%s", err, out)
	}
	pythonLoads(t, key, "typed passphrase", showKey(t, key).Fingerprint)
}

// TestCLIKeyMaster recovers the key file Python wrapped for its master key
// and creates a master key pair of its own.
func TestCLIKeyMaster(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	td := "../crypt/keyfile/testdata/"
	mpw := e2e.WritePass(t, dir, "mpw", "master pass")
	out := filepath.Join(dir, "recovered.key")
	r := e2e.Cairn(t, []string{"CAIRN_MASTER_PASSWORD_FILE=" + mpw}, "key", "recover", "--master-key", td+"master-private.pem", td+"rsa-encrypted.key.blob", out)
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile(td + "pbkdf2.key")
	if r.Code != 0 || string(got) != string(want) {
		t.Fatalf("recover: exit %d %s\n%s", r.Code, r.Stderr, got)
	}
	if r := e2e.Cairn(t, nil, "key", "recover", "--master-key", td+"master-private.pem", "--master-password-file", mpw, td+"rsa-encrypted.key.blob", out); r.Code == 0 || !strings.Contains(r.Stderr, "exists") {
		t.Errorf("recover over an existing file: exit %d %s", r.Code, r.Stderr)
	}
	wrong := e2e.WritePass(t, dir, "wrong", "not the master pass")
	r = e2e.Cairn(t, nil, "key", "recover", "--master-key", td+"master-private.pem", "--master-password-file", wrong, td+"rsa-encrypted.key.blob", filepath.Join(dir, "x.key"))
	if r.Code == 0 || !strings.Contains(r.Stderr, "master-private.pem") {
		t.Errorf("wrong master passphrase: exit %d %s", r.Code, r.Stderr)
	}

	prefix := filepath.Join(dir, "master")
	e2e.MustCairn(t, "key", "create-master", "--master-password-file", mpw, prefix)
	for _, f := range []string{"-private.pem", "-public.pem"} {
		if fi, err := os.Stat(prefix + f); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v", f, fi, err)
		}
	}
	priv, _ := os.ReadFile(prefix + "-private.pem")
	if !strings.HasPrefix(string(priv), "-----BEGIN ENCRYPTED PRIVATE KEY-----") {
		t.Errorf("private key is not encrypted PKCS#8:\n%.60s", priv)
	}
	if exec.Command("python3", "-c", "import cryptography").Run() == nil {
		cmd := exec.Command("python3", "-c", "import sys; from cryptography.hazmat.primitives import serialization as s; "+
			"k = s.load_pem_private_key(open(sys.argv[1], 'rb').read(), b'master pass'); print(k.key_size)", prefix+"-private.pem")
		if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "4096" {
			t.Errorf("python reads the master key: %v %s", err, out)
		}
	}
	if r := e2e.Cairn(t, nil, "key", "create-master", "--master-password-file", mpw, prefix); r.Code == 0 {
		t.Error("create-master replaced an existing master key")
	}
}

// TestCLIKeyPaperkey prints the Python-laid-out paper keys (no qrencode on
// PATH: the text alone, with a warning).
func TestCLIKeyPaperkey(t *testing.T) {
	t.Parallel()
	td := "../crypt/keyfile/testdata/"
	noQR := []string{"PATH=" + t.TempDir()}
	for _, name := range []string{"scrypt.key", "master-private.pem"} {
		r := e2e.Cairn(t, noQR, "key", "paperkey", td+name)
		want, _ := os.ReadFile(td + name + ".paperkey")
		if r.Code != 0 || r.Stdout != string(want) || !strings.Contains(r.Stderr, "qrencode") {
			t.Errorf("%s: exit %d %s\n%s", name, r.Code, r.Stderr, r.Stdout)
		}
	}
	if r := e2e.Cairn(t, noQR, "key", "paperkey", td+"expected.json"); r.Code == 0 || !strings.Contains(r.Stderr, "expected.json") {
		t.Errorf("paperkey of a non-key: exit %d %s", r.Code, r.Stderr)
	}
	if r := e2e.Cairn(t, noQR, "key", "paperkey", "--output-format", "html", td+"scrypt.key"); r.Code != 2 {
		t.Errorf("--output-format html: exit %d", r.Code)
	}
}

// needTerminal skips a test that types at a pseudo-terminal (atTerminal)
// where python3 is missing.
func needTerminal(t *testing.T) {
	t.Helper()
	if exec.Command("python3", "-c", "import pty").Run() != nil {
		t.Skip("python3 is not installed: no pseudo-terminal to type at")
	}
}

// atTerminal runs args on a pseudo-terminal (python3's pty) and types each
// answer's line once its prompt is out and the terminal's echo is off
// (ReadPassword turns it off after printing the prompt): waiting for
// that, not for a time, so a slow binary under load cannot have the
// typing echoed. It returns what the terminal showed.
func atTerminal(answers [][2]string, args ...string) ([]byte, error) {
	enc, err := json.Marshal(answers)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("python3", append([]string{"-c", ptyScript}, args...)...)
	cmd.Env = append(os.Environ(), "CAIRN_TEST_PTY_ANSWERS="+string(enc))
	return cmd.CombinedOutput()
}

const ptyScript = `
import json, os, select, sys, termios, time
master, slave = os.openpty()
pid = os.fork()
if pid == 0:
    os.close(master)
    os.login_tty(slave)
    os.execv(sys.argv[1], sys.argv[1:])
out = b""
def read(wait):
    global out
    r, _, _ = select.select([master], [], [], wait)
    if r:
        try:
            b = os.read(master, 4096)
            out += b
            return len(b) > 0
        except OSError:
            pass
    return False
for prompt, line in json.loads(os.environ["CAIRN_TEST_PTY_ANSWERS"]):
    deadline = time.time() + 120
    while prompt.encode() not in out or termios.tcgetattr(slave)[3] & termios.ECHO:
        if time.time() > deadline:
            sys.stdout.write("no prompt %r with echo off: %r" % (prompt, out.decode()))
            sys.exit(9)
        read(0.02)
    os.write(master, line.encode() + b"\n")
_, status = os.waitpid(pid, 0)
while read(0.2):
    pass
sys.stdout.write(out.decode())
sys.exit(os.waitstatus_to_exitcode(status))
`
