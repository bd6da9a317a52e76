package test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/test/e2e"
)

// TestCryptBackupRead: a backup with a passphrase-protected key file
// leaves no plaintext in the store; cat, ls, restore and dump with the
// key give the data back byte for byte; without it, with the wrong key or
// the wrong passphrase they fail clearly and print no data.
func TestCryptBackupRead(t *testing.T) {
	t.Parallel()
	e := newCryptEnv(t, e2e.SharedStore(t))
	src := e.source(t, 1)
	withKey := []string{"--keyfile", e.scrypt, "--password-file", e.pw}
	snap := e.backup(t, "enc", src, withKey...)
	plain := e.backup(t, "plain", src)
	if !e.holdsMarker(t, plain) {
		t.Fatal("the plain snapshot's chunks lack the marker: this check could not fail")
	}
	if e.holdsMarker(t, snap) {
		t.Fatal("an encrypted snapshot's chunk or file holds plaintext")
	}
	st := []string{"--store", e.st}
	cat := func(args ...string) e2e.Result { return e2e.Cairn(t, nil, append(append(st, "cat"), args...)...) }
	if r := cat(append([]string{snap, "disk.img"}, withKey...)...); r.Code != 0 || r.Stdout != string(src.imgData) {
		t.Fatalf("cat image with the key: exit %d, %d bytes: %s", r.Code, len(r.Stdout), r.Stderr)
	}
	if r := cat(append([]string{snap, "conf.blob"}, withKey...)...); r.Code != 0 || r.Stdout != string(src.blobData) {
		t.Fatalf("cat blob with the key: exit %d %q %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := cat(append([]string{snap, "root.pxar", "sub/big.bin"}, withKey...)...); r.Code != 0 || r.Stdout != string(src.file) {
		t.Fatalf("cat tree file with the key: exit %d %s", r.Code, r.Stderr)
	}
	env := []string{"CAIRN_KEYFILE=" + e.none + ":" + e.scrypt, "CAIRN_KEY_PASSWORD_FILE=" + e.pw}
	if r := e2e.Cairn(t, env, append(st, "ls", snap, "root.pxar", "sub")...); r.Code != 0 || !strings.Contains(r.Stdout, "big.bin") {
		t.Fatalf("ls with CAIRN_KEYFILE: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	out := filepath.Join(e.dir, "out")
	e2e.MustCairn(t, append(append(st, "restore", snap, "disk.img", out+".img"), withKey...)...)
	e2e.MustCairn(t, append(append(st, "restore", snap, "root.pxar", out+".tree"), withKey...)...)
	if b, _ := os.ReadFile(out + ".img"); !bytes.Equal(b, src.imgData) {
		t.Error("restored image differs")
	}
	if b, _ := os.ReadFile(filepath.Join(out+".tree", "sub", "big.bin")); !bytes.Equal(b, src.file) {
		t.Error("restored tree file differs")
	}
	for _, args := range [][]string{{"cat", snap, "disk.img"}, {"cat", snap, "conf.blob"}, {"ls", snap, "root.pxar"},
		{"restore", snap, "disk.img", "-"}, {"dump", snap, "root.pxar"}} {
		missingKey(t, e2e.Cairn(t, nil, append(st, args...)...), snap, e.fpScr)
		missingKey(t, e2e.Cairn(t, nil, append(append(st, args...), "--keyfile", e.none)...), snap, e.fpScr)
	}
	r := cat(snap, "disk.img", "--keyfile", e.scrypt, "--password-file", e.wrongPW)
	if r.Code == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, e.scrypt) || !strings.Contains(r.Stderr, "passphrase") {
		t.Errorf("wrong passphrase: exit %d %s", r.Code, r.Stderr)
	}
	r = e2e.Cairn(t, nil, append(st, "backup", "--ns", e.ns, "--id", "two", "--keyfile", e.none, "--keyfile", e.scrypt, "c.blob:"+src.blob)...)
	if r.Code != 2 || !strings.Contains(r.Stderr, "exactly one") {
		t.Errorf("backup with two keys: exit %d %s", r.Code, r.Stderr)
	}
	var rows []struct {
		Snapshot       string `json:"snapshot"`
		CryptMode      string `json:"crypt_mode"`
		KeyFingerprint string `json:"key_fingerprint"`
	}
	if err := json.Unmarshal([]byte(e2e.MustCairn(t, append(st, "snapshots", "--ns", e.ns, "--json")...).Stdout), &rows); err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		want := map[string][2]string{snap: {"encrypt", e.fpScr}, plain: {"none", ""}}[row.Snapshot]
		if row.CryptMode != want[0] || row.KeyFingerprint != want[1] {
			t.Errorf("snapshots --json %s: %q %q, want %q", row.Snapshot, row.CryptMode, row.KeyFingerprint, want)
		}
	}
	if txt := e2e.MustCairn(t, append(st, "snapshots", "--ns", e.ns)...).Stdout; !strings.Contains(txt, "key "+e.fpScr) {
		t.Errorf("snapshots does not show the key:\n%s", txt)
	}
}

// TestCryptTwoKeysVerifyDamage: two groups under two keys read with both
// --keyfiles, each with its own; verify with and without the keys; a
// flipped bit in a chunk fails cat (naming the chunk) and verify; a
// manifest whose signature was changed fails, naming the manifest.
func TestCryptTwoKeysVerifyDamage(t *testing.T) {
	t.Parallel()
	// a store of its own, as TestCryptMount's: two verify runs on one
	// store meet at its verify lock
	e := newCryptEnv(t, contractStore(t))
	src := e.source(t, 2)
	a := e.backup(t, "a", src, "--keyfile", e.none)
	b := e.backup(t, "b", src, "--keyfile", e.scrypt, "--password-file", e.pw)
	st := []string{"--store", e.st}
	both := []string{"--keyfile", e.none, "--keyfile", e.scrypt, "--password-file", e.pw}
	for _, snap := range []string{a, b} {
		if r := e2e.Cairn(t, nil, append(append(st, "cat", snap, "disk.img"), both...)...); r.Code != 0 || r.Stdout != string(src.imgData) {
			t.Fatalf("cat %s with both keys: exit %d %s", snap, r.Code, r.Stderr)
		}
	}
	missingKey(t, e2e.Cairn(t, nil, append(st, "cat", b, "disk.img", "--keyfile", e.none)...), b, e.fpScr)
	if r := e2e.Cairn(t, nil, append(append(st, "verify", "--ns", e.ns), both...)...); r.Code != 0 {
		t.Fatalf("verify with the keys: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	if r := e2e.Cairn(t, nil, append(st, "verify", "--ns", e.ns)...); r.Code != 0 {
		t.Errorf("verify without the keys (CRC, sizes, structure): exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	chunkPath := snapChunkFiles(t, e.st, a)[1]
	orig, err := os.ReadFile(chunkPath)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(orig)
	flipped[len(flipped)/2] ^= 0x01
	writeFile(t, chunkPath, flipped)
	r := e2e.Cairn(t, nil, append(st, "cat", a, "disk.img", "--keyfile", e.none)...)
	if r.Code == 0 || !strings.Contains(r.Stderr, filepath.Base(chunkPath)) || len(r.Stdout) >= len(src.imgData) {
		t.Errorf("cat of a flipped chunk: exit %d, %d bytes, %s", r.Code, len(r.Stdout), r.Stderr)
	}
	for _, keys := range [][]string{nil, {"--keyfile", e.none}} {
		if r := e2e.Cairn(t, nil, append(append(st, "verify", a), keys...)...); r.Code == 0 {
			t.Errorf("verify %v of a flipped chunk: exit 0 %s", keys, r.Stdout)
		}
	}
	writeFile(t, chunkPath, orig)
	tamperSignature(t, filepath.Join(e.st, b, "index.json.blob"))
	r = e2e.Cairn(t, nil, append(append(st, "cat", b, "disk.img"), both...)...)
	if r.Code == 0 || r.Stdout != "" || !strings.Contains(r.Stderr, "index.json.blob") || !strings.Contains(r.Stderr, "signature") {
		t.Errorf("cat with a tampered manifest signature: exit %d %d bytes %s", r.Code, len(r.Stdout), r.Stderr)
	}
	// The mount answers EIO for it, with a log line, and reads the other.
	mnt, _, logFile := e2e.DaemonMount(t, e.st, append([]string{"--ns", e.ns}, both...)...)
	rel := func(s string) string { return strings.TrimPrefix(s, "ns/"+e.ns+"/") }
	if _, err := os.ReadDir(filepath.Join(mnt, rel(b))); !errors.Is(err, syscall.EIO) {
		t.Errorf("readdir of the snapshot whose signature fails: %v, want EIO", err)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, rel(a), "disk.img")); err != nil || !bytes.Equal(got, src.imgData) {
		t.Errorf("the other snapshot through the same mount: %v", err)
	}
	if logged, _ := os.ReadFile(logFile); !strings.Contains(string(logged), "index.json.blob") || !strings.Contains(string(logged), rel(b)) {
		t.Errorf("no log line on the failing signature:\n%s", logged)
	}
}

// tamperSignature changes one digit of a manifest blob's "signature".
func tamperSignature(t *testing.T, path string) {
	t.Helper()
	blob, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := chunk.DecodeBlob(nil, blob, 0)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	sig, _ := m["signature"].(string)
	if len(sig) != 64 {
		t.Fatalf("manifest signature %q", sig)
	}
	m["signature"] = flipHex(sig)
	data, _ = json.Marshal(m)
	if blob, err = chunk.EncodeBlob(nil, data, false); err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, blob)
}

func flipHex(s string) string {
	if s[0] == '0' {
		return "1" + s[1:]
	}
	return "0" + s[1:]
}
