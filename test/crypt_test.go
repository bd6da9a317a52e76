package test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/chunk"
)

// Encrypted snapshots (issue 18) with the real binary: key files made by
// `cairn key create`, backups with --keyfile, every reader with and
// without the key, the mount, verify, tape, gc, master-key recovery.

var cryptCount atomic.Int64

// cryptEnv is one test's keys and data: an unencrypted key file (kdf
// none) and one under a passphrase (scrypt), in a namespace of its own.
type cryptEnv struct {
	st, dir, ns   string
	none, scrypt  string // key files
	pw, wrongPW   string // passphrase files
	fpNone, fpScr string // short fingerprints
	marker        []byte
}

func newCryptEnv(t *testing.T, st string) *cryptEnv {
	t.Helper()
	n := cryptCount.Add(1)
	e := &cryptEnv{st: st, dir: t.TempDir(), ns: "crypt" + strconv.FormatInt(n, 10)}
	e.marker = []byte("CAIRN-PLAINTEXT-MARKER-" + e.ns)
	e.none, e.scrypt = filepath.Join(e.dir, "none.key"), filepath.Join(e.dir, "scrypt.key")
	e.pw, e.wrongPW = writePass(t, e.dir, "pw", "correct horse battery"), writePass(t, e.dir, "wrong", "not the passphrase")
	mustCairn(t, "key", "create", "--kdf", "none", e.none)
	mustCairn(t, "key", "create", "--kdf", "scrypt", "--password-file", e.pw, e.scrypt)
	e.fpNone, e.fpScr = shortFP(t, e.none), shortFP(t, e.scrypt)
	return e
}

// shortFP is the short form (first 8 bytes) of a key file's fingerprint.
func shortFP(t *testing.T, key string) string {
	t.Helper()
	var s struct{ Fingerprint string }
	if err := json.Unmarshal([]byte(mustCairn(t, "key", "show", "--json", key).stdout), &s); err != nil || len(s.Fingerprint) < 23 {
		t.Fatalf("key show %s: %v %q", key, err, s.Fingerprint)
	}
	return s.Fingerprint[:23]
}

// marked is n random bytes with the marker every 64 KiB.
func (e *cryptEnv) marked(n int, seed uint64) []byte {
	b := randBytes(n, seed)
	for off := 100; off+len(e.marker) < n; off += 64 << 10 {
		copy(b[off:], e.marker)
	}
	return b
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cryptSource is what one backup holds: an image, a tree and a blob.
type cryptSource struct {
	img, tree, blob string
	imgData, file   []byte // the image, tree/sub/big.bin
	blobData        []byte
}

func (e *cryptEnv) source(t *testing.T, seed uint64) cryptSource {
	t.Helper()
	d := t.TempDir()
	s := cryptSource{imgData: e.marked(3<<20, seed), file: e.marked(600<<10, seed+1), blobData: append(append([]byte("conf "), e.marker...), '\n')}
	s.img = writeFile(t, filepath.Join(d, "disk.raw"), s.imgData)
	s.tree = filepath.Join(d, "tree")
	writeFile(t, filepath.Join(s.tree, "sub", "big.bin"), s.file)
	writeFile(t, filepath.Join(s.tree, "small.txt"), append([]byte("small "), e.marker...))
	s.blob = writeFile(t, filepath.Join(d, "conf"), s.blobData)
	return s
}

// backup backs src up as host/id in the env's namespace with args (the
// key flags) and returns the snapshot name.
func (e *cryptEnv) backup(t *testing.T, id string, src cryptSource, args ...string) string {
	t.Helper()
	all := append([]string{"--store", e.st, "backup", "--ns", e.ns, "--id", id, "--chunk-size", "1M", "--no-sync", "--json"}, args...)
	r := mustCairn(t, append(all, "disk.img:"+src.img, "root.pxar:"+src.tree, "conf.blob:"+src.blob)...)
	var sum struct {
		Snapshot       string `json:"snapshot"`
		KeyFingerprint string `json:"key_fingerprint"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &sum); err != nil {
		t.Fatal(err)
	}
	return sum.Snapshot
}

// snapChunkFiles are the chunk files the snapshot's indexes name.
func snapChunkFiles(t *testing.T, st, snap string) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"disk.img.fidx", "root.pxar.didx", "root.mpxar.didx", "root.ppxar.didx"} {
		b, err := os.ReadFile(filepath.Join(st, snap, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			t.Fatal(err)
		}
		step, at := 32, 0
		if strings.HasSuffix(name, ".didx") {
			step, at = 40, 8
		}
		for off := 4096; off+step <= len(b); off += step {
			h := hex.EncodeToString(b[off+at : off+at+32])
			out = append(out, filepath.Join(st, ".chunks", h[:4], h))
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no chunks found", snap)
	}
	return out
}

// holdsMarker tells whether a chunk file of snap, or a file of its
// directory, contains the marker.
func (e *cryptEnv) holdsMarker(t *testing.T, snap string) bool {
	t.Helper()
	files := snapChunkFiles(t, e.st, snap)
	ents, _ := os.ReadDir(filepath.Join(e.st, snap))
	for _, f := range ents {
		files = append(files, filepath.Join(e.st, snap, f.Name()))
	}
	for _, f := range files {
		if b, err := os.ReadFile(f); err != nil {
			t.Fatal(err)
		} else if bytes.Contains(b, e.marker) {
			return true
		}
	}
	return false
}

// keyMaterial is what must never be printed: the key of a kdf-none key
// file (as stored, base64, and as hex) and the passphrase.
func (e *cryptEnv) keyMaterial(t *testing.T) []string {
	t.Helper()
	var kf struct{ Data string }
	b, _ := os.ReadFile(e.none)
	if err := json.Unmarshal(b, &kf); err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(kf.Data)
	if err != nil || len(raw) != 32 {
		t.Fatalf("key file data: %v", err)
	}
	return []string{kf.Data, hex.EncodeToString(raw), "correct horse battery"}
}

func noKeyMaterial(t *testing.T, what, text string, material []string) {
	t.Helper()
	for _, m := range material {
		if strings.Contains(text, m) {
			t.Errorf("%s shows key material %q", what, m)
		}
	}
}

// missingKey checks a reader's failure without the key: exit 1, the
// snapshot and the key's short fingerprint named, nothing on stdout.
func missingKey(t *testing.T, r result, snap, fp string) {
	t.Helper()
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, snap) || !strings.Contains(r.stderr, fp) ||
		!strings.Contains(r.stderr, "--keyfile") {
		t.Errorf("without the key: exit %d, stdout %d bytes, stderr %s", r.code, len(r.stdout), r.stderr)
	}
}

// TestCryptBackupRead: a backup with a passphrase-protected key file
// leaves no plaintext in the store; cat, ls, restore and dump with the
// key give the data back byte for byte; without it, with the wrong key or
// the wrong passphrase they fail clearly and print no data.
func TestCryptBackupRead(t *testing.T) {
	t.Parallel()
	e := newCryptEnv(t, sharedStore(t))
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
	cat := func(args ...string) result { return cairn(t, nil, append(append(st, "cat"), args...)...) }
	if r := cat(append([]string{snap, "disk.img"}, withKey...)...); r.code != 0 || r.stdout != string(src.imgData) {
		t.Fatalf("cat image with the key: exit %d, %d bytes: %s", r.code, len(r.stdout), r.stderr)
	}
	if r := cat(append([]string{snap, "conf.blob"}, withKey...)...); r.code != 0 || r.stdout != string(src.blobData) {
		t.Fatalf("cat blob with the key: exit %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cat(append([]string{snap, "root.pxar", "sub/big.bin"}, withKey...)...); r.code != 0 || r.stdout != string(src.file) {
		t.Fatalf("cat tree file with the key: exit %d %s", r.code, r.stderr)
	}
	env := []string{"CAIRN_KEYFILE=" + e.none + ":" + e.scrypt, "CAIRN_KEY_PASSWORD_FILE=" + e.pw}
	if r := cairn(t, env, append(st, "ls", snap, "root.pxar", "sub")...); r.code != 0 || !strings.Contains(r.stdout, "big.bin") {
		t.Fatalf("ls with CAIRN_KEYFILE: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	out := filepath.Join(e.dir, "out")
	mustCairn(t, append(append(st, "restore", snap, "disk.img", out+".img"), withKey...)...)
	mustCairn(t, append(append(st, "restore", snap, "root.pxar", out+".tree"), withKey...)...)
	if b, _ := os.ReadFile(out + ".img"); !bytes.Equal(b, src.imgData) {
		t.Error("restored image differs")
	}
	if b, _ := os.ReadFile(filepath.Join(out+".tree", "sub", "big.bin")); !bytes.Equal(b, src.file) {
		t.Error("restored tree file differs")
	}
	for _, args := range [][]string{{"cat", snap, "disk.img"}, {"cat", snap, "conf.blob"}, {"ls", snap, "root.pxar"},
		{"restore", snap, "disk.img", "-"}, {"dump", snap, "root.pxar"}} {
		missingKey(t, cairn(t, nil, append(st, args...)...), snap, e.fpScr)
		missingKey(t, cairn(t, nil, append(append(st, args...), "--keyfile", e.none)...), snap, e.fpScr)
	}
	r := cat(snap, "disk.img", "--keyfile", e.scrypt, "--password-file", e.wrongPW)
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, e.scrypt) || !strings.Contains(r.stderr, "passphrase") {
		t.Errorf("wrong passphrase: exit %d %s", r.code, r.stderr)
	}
	r = cairn(t, nil, append(st, "backup", "--ns", e.ns, "--id", "two", "--keyfile", e.none, "--keyfile", e.scrypt, "c.blob:"+src.blob)...)
	if r.code != 2 || !strings.Contains(r.stderr, "exactly one") {
		t.Errorf("backup with two keys: exit %d %s", r.code, r.stderr)
	}
	var rows []struct {
		Snapshot       string `json:"snapshot"`
		CryptMode      string `json:"crypt_mode"`
		KeyFingerprint string `json:"key_fingerprint"`
	}
	if err := json.Unmarshal([]byte(mustCairn(t, append(st, "snapshots", "--ns", e.ns, "--json")...).stdout), &rows); err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		want := map[string][2]string{snap: {"encrypt", e.fpScr}, plain: {"none", ""}}[row.Snapshot]
		if row.CryptMode != want[0] || row.KeyFingerprint != want[1] {
			t.Errorf("snapshots --json %s: %q %q, want %q", row.Snapshot, row.CryptMode, row.KeyFingerprint, want)
		}
	}
	if txt := mustCairn(t, append(st, "snapshots", "--ns", e.ns)...).stdout; !strings.Contains(txt, "key "+e.fpScr) {
		t.Errorf("snapshots does not show the key:\n%s", txt)
	}
}

// TestCryptTwoKeysVerifyDamage: two groups under two keys read with both
// --keyfiles, each with its own; verify with and without the keys; a
// flipped bit in a chunk fails cat (naming the chunk) and verify; a
// manifest whose signature was changed fails, naming the manifest.
func TestCryptTwoKeysVerifyDamage(t *testing.T) {
	t.Parallel()
	e := newCryptEnv(t, sharedStore(t))
	src := e.source(t, 2)
	a := e.backup(t, "a", src, "--keyfile", e.none)
	b := e.backup(t, "b", src, "--keyfile", e.scrypt, "--password-file", e.pw)
	st := []string{"--store", e.st}
	both := []string{"--keyfile", e.none, "--keyfile", e.scrypt, "--password-file", e.pw}
	for _, snap := range []string{a, b} {
		if r := cairn(t, nil, append(append(st, "cat", snap, "disk.img"), both...)...); r.code != 0 || r.stdout != string(src.imgData) {
			t.Fatalf("cat %s with both keys: exit %d %s", snap, r.code, r.stderr)
		}
	}
	missingKey(t, cairn(t, nil, append(st, "cat", b, "disk.img", "--keyfile", e.none)...), b, e.fpScr)
	if r := cairn(t, nil, append(append(st, "verify", "--ns", e.ns), both...)...); r.code != 0 {
		t.Fatalf("verify with the keys: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	if r := cairn(t, nil, append(st, "verify", "--ns", e.ns)...); r.code != 0 {
		t.Errorf("verify without the keys (CRC, sizes, structure): exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	chunkPath := snapChunkFiles(t, e.st, a)[1]
	orig, err := os.ReadFile(chunkPath)
	if err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(orig)
	flipped[len(flipped)/2] ^= 0x01
	writeFile(t, chunkPath, flipped)
	r := cairn(t, nil, append(st, "cat", a, "disk.img", "--keyfile", e.none)...)
	if r.code == 0 || !strings.Contains(r.stderr, filepath.Base(chunkPath)) || len(r.stdout) >= len(src.imgData) {
		t.Errorf("cat of a flipped chunk: exit %d, %d bytes, %s", r.code, len(r.stdout), r.stderr)
	}
	for _, keys := range [][]string{nil, {"--keyfile", e.none}} {
		if r := cairn(t, nil, append(append(st, "verify", a), keys...)...); r.code == 0 {
			t.Errorf("verify %v of a flipped chunk: exit 0 %s", keys, r.stdout)
		}
	}
	writeFile(t, chunkPath, orig)
	tamperSignature(t, filepath.Join(e.st, b, "index.json.blob"))
	r = cairn(t, nil, append(append(st, "cat", b, "disk.img"), both...)...)
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "index.json.blob") || !strings.Contains(r.stderr, "signature") {
		t.Errorf("cat with a tampered manifest signature: exit %d %d bytes %s", r.code, len(r.stdout), r.stderr)
	}
	// The mount answers EIO for it, with a log line, and reads the other.
	mnt, _, logFile := daemonMount(t, e.st, append([]string{"--ns", e.ns}, both...)...)
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

// TestCryptMount: a mount with the key reads the encrypted snapshot as
// the data backed up, and a verify started through its control file uses
// its key; a mount without it answers EACCES for that snapshot (with one
// log line) and reads the plain one. No key material in ps, logs or
// .jobs status.
func TestCryptMount(t *testing.T) {
	t.Parallel()
	e := newCryptEnv(t, sharedStore(t))
	src := e.source(t, 3)
	snap := e.backup(t, "enc", src, "--keyfile", e.none)
	plain := e.backup(t, "plain", src)
	mnt, pid, logFile := daemonMount(t, e.st, "--ns", e.ns, "--keyfile", e.none)
	material := e.keyMaterial(t)
	cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	environ, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	noKeyMaterial(t, "the mount's command line and environment", string(cmdline)+string(environ), material)
	rel := func(s string) string { return strings.TrimPrefix(s, "ns/"+e.ns+"/") }
	for path, want := range map[string][]byte{"disk.img": src.imgData, "conf.blob": src.blobData, "root.pxar/sub/big.bin": src.file} {
		if b, err := os.ReadFile(filepath.Join(mnt, rel(snap), path)); err != nil || !bytes.Equal(b, want) {
			t.Errorf("%s through the mount with the key: %v, %d bytes", path, err, len(b))
		}
	}
	jobs := filepath.Join(mnt, ".jobs", "verify")
	writeFile(t, filepath.Join(jobs, "control"), []byte("start snapshots="+snap+"\n"))
	status := waitJob(t, filepath.Join(jobs, "status"))
	if !strings.Contains(status, `"state": "ok"`) {
		t.Errorf("verify through the mount: %s", status)
	}
	jobLog, _ := os.ReadFile(filepath.Join(jobs, "log"))
	noKeyMaterial(t, ".jobs/verify status and log", status+string(jobLog), material)

	bare, _, bareLog := daemonMount(t, e.st, "--ns", e.ns)
	encDir := filepath.Join(bare, rel(snap))
	if _, err := os.ReadDir(encDir); !errors.Is(err, syscall.EACCES) {
		t.Errorf("readdir of the encrypted snapshot without the key: %v, want EACCES", err)
	}
	for _, p := range []string{"disk.img", "conf.blob", "root.pxar"} {
		if _, err := os.ReadFile(filepath.Join(encDir, p)); !errors.Is(err, syscall.EACCES) {
			t.Errorf("%s without the key: %v, want EACCES", p, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(bare, rel(plain), "disk.img")); err != nil || !bytes.Equal(b, src.imgData) {
		t.Errorf("the plain snapshot beside it: %v, %d bytes", err, len(b))
	}
	logged, _ := os.ReadFile(bareLog)
	if n := strings.Count(string(logged), "mount with --keyfile"); n != 1 || !strings.Contains(string(logged), e.fpNone) ||
		!strings.Contains(string(logged), snap) {
		t.Errorf("%d log lines on the missing key:\n%s", n, logged)
	}
	for _, f := range []string{logFile, bareLog} {
		b, _ := os.ReadFile(f)
		noKeyMaterial(t, "the mount's log", string(b), material)
	}
}

// TestCryptTapeGCRecover: an encrypted snapshot exported to tape is
// restored into a new store as it was (read with the key, not without);
// gc on a store of plain and encrypted groups keeps what both use; a
// backup with --master-pubkey whose key file is lost is read again with
// the key file `cairn key recover` gets back with the master key.
func TestCryptTapeGCRecover(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "store")
	mustCairn(t, "--store", st, "init", "-q")
	e := newCryptEnv(t, st)
	src := e.source(t, 4)
	mpw := writePass(t, e.dir, "mpw", "master passphrase")
	mustCairn(t, "key", "create-master", "--master-password-file", mpw, filepath.Join(e.dir, "master"))
	lost := filepath.Join(e.dir, "lost.key")
	mustCairn(t, "key", "create", "--kdf", "scrypt", "--password-file", e.pw, lost)
	snap := e.backup(t, "enc", src, "--keyfile", lost, "--password-file", e.pw, "--master-pubkey", filepath.Join(e.dir, "master-public.pem"))
	plain := e.backup(t, "plain", src)
	gone := e.backup(t, "gone", cryptSource{img: src.img, tree: src.tree, blob: src.blob}, "--keyfile", e.none)
	fpLost := shortFP(t, lost)
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}

	// gc after forgetting one encrypted snapshot keeps the others whole.
	mustCairn(t, "--store", st, "forget", gone)
	mustCairn(t, "--store", st, "gc", "--atime-cutoff", "0s")
	recovered := filepath.Join(e.dir, "recovered.key")
	r := cairn(t, []string{"CAIRN_MASTER_PASSWORD_FILE=" + mpw}, "--store", st, "key", "recover",
		"--master-key", filepath.Join(e.dir, "master-private.pem"), "--snapshot", snap, recovered)
	if r.code != 0 || shortFP(t, recovered) != fpLost {
		t.Fatalf("recover from the snapshot: exit %d %s", r.code, r.stderr)
	}
	key := []string{"--keyfile", recovered, "--password-file", e.pw}
	if r := cairn(t, nil, append([]string{"--store", st, "cat", snap, "disk.img"}, key...)...); r.code != 0 || r.stdout != string(src.imgData) {
		t.Fatalf("cat with the recovered key after gc: exit %d %s", r.code, r.stderr)
	}
	if r := cairn(t, nil, "--store", st, "cat", plain, "disk.img"); r.code != 0 || r.stdout != string(src.imgData) {
		t.Fatalf("cat of the plain snapshot after gc: exit %d %s", r.code, r.stderr)
	}
	wrapped := cairn(t, nil, "--store", st, "cat", snap, "rsa-encrypted.key.blob")
	if wrapped.code != 0 || len(wrapped.stdout) != 512 {
		t.Fatalf("cat of the wrapped key without the key: exit %d, %d bytes %s", wrapped.code, len(wrapped.stdout), wrapped.stderr)
	}
	if r := cairn(t, nil, "--store", st, "verify", "--ns", e.ns, "--keyfile", recovered, "--password-file", e.pw); r.code != 0 {
		t.Fatalf("verify after gc: exit %d %s %s", r.code, r.stdout, r.stderr)
	}

	drive := t.TempDir()
	mustCairn(t, "--store", st, "tape", "export", "--drive", drive, "--pool", "c", "--tape-size", "16M", snap)
	dst := sharedStore(t) // the snapshot's namespace is not there: the restore adds it
	mustCairn(t, append([]string{"--store", dst, "tape", "restore", "--drive", drive, snap}, key...)...)
	if r := cairn(t, nil, append([]string{"--store", dst, "cat", snap, "root.pxar", "sub/big.bin"}, key...)...); r.code != 0 || r.stdout != string(src.file) {
		t.Fatalf("cat after tape restore: exit %d %s", r.code, r.stderr)
	}
	missingKey(t, cairn(t, nil, "--store", dst, "cat", snap, "disk.img"), snap, fpLost)
	if e.holdsMarker(t, snap) || (&cryptEnv{st: dst, marker: e.marker}).holdsMarker(t, snap) {
		t.Error("plaintext in the store or the restored store")
	}
	tapes, _ := filepath.Glob(filepath.Join(drive, "*"))
	for _, f := range tapes {
		if b, _ := os.ReadFile(f); bytes.Contains(b, e.marker) {
			t.Errorf("tape file %s holds plaintext", f)
		}
	}
}

// TestCryptBadKeyFiles: a truncated key file, one with an unknown kdf and
// a missing one stop a reader before it reads anything, naming the file;
// $CAIRN_KEYFILE is left alone by commands that read no archive data.
func TestCryptBadKeyFiles(t *testing.T) {
	t.Parallel()
	st := sharedStore(t)
	e := newCryptEnv(t, st)
	good, _ := os.ReadFile(e.scrypt)
	bad := map[string][]byte{
		"truncated.key": good[:len(good)/2],
		"argon.key":     bytes.Replace(good, []byte(`{"Scrypt":`), []byte(`{"Argon2":`), 1),
	}
	for name, data := range bad {
		path := writeFile(t, filepath.Join(e.dir, name), data)
		r := cairn(t, nil, "--store", st, "cat", "host/none/latest", "disk.img", "--keyfile", path, "--password-file", e.pw)
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, path) || strings.Contains(r.stderr, "panic") {
			t.Errorf("%s: exit %d %s", name, r.code, r.stderr)
		}
	}
	missing := filepath.Join(e.dir, "missing.key")
	if r := cairn(t, nil, "--store", st, "ls", "host/none/latest", "--keyfile", missing); r.code != 1 || !strings.Contains(r.stderr, missing) {
		t.Errorf("missing key file: exit %d %s", r.code, r.stderr)
	}
	if r := cairn(t, []string{"CAIRN_KEYFILE=" + missing}, "--store", st, "snapshots", "--ns", e.ns); r.code != 0 {
		t.Errorf("snapshots with $CAIRN_KEYFILE naming a missing file: exit %d %s", r.code, r.stderr)
	}
}

// TestCryptMountDaemonPrompt: mount --daemon asks for the key file's
// passphrase at the terminal (a pseudo-terminal of Python's pty module)
// and the background mount reads the encrypted snapshot with it.
func TestCryptMountDaemonPrompt(t *testing.T) {
	t.Parallel()
	needFUSE(t)
	if exec.Command("python3", "-c", "import pty").Run() != nil {
		t.Skip("python3 is not installed: no pseudo-terminal to type at")
	}
	e := newCryptEnv(t, sharedStore(t))
	src := e.source(t, 5)
	snap := e.backup(t, "tty", src, "--keyfile", e.scrypt, "--password-file", e.pw)
	mnt, logFile := t.TempDir(), filepath.Join(e.dir, "mount.log")
	// The passphrase is typed once the prompt is out and the terminal's
	// echo is off, not after a fixed time (under load it would be echoed).
	script := `
import os, select, sys, termios, time
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
deadline = time.time() + 120
while b"passphrase of the key file(s): " not in out or termios.tcgetattr(slave)[3] & termios.ECHO:
    if time.time() > deadline:
        sys.stdout.write("no prompt with echo off: %r" % out.decode())
        sys.exit(9)
    read(0.02)
os.write(master, b"correct horse battery\n")
_, status = os.waitpid(pid, 0)
while read(0.2):
    pass
sys.stdout.write(out.decode())
sys.exit(os.waitstatus_to_exitcode(status))
`
	out, err := exec.Command("python3", "-c", script, binPath, "--store", e.st, "mount", "--daemon", "--log-file", logFile,
		"--ns", e.ns, "--keyfile", e.scrypt, mnt).CombinedOutput()
	t.Cleanup(func() { cairn(t, nil, "umount", "--lazy", mnt) })
	if err != nil || !strings.Contains(string(out), "passphrase") || strings.Contains(string(out), "correct horse") {
		t.Fatalf("mount --daemon at a terminal: %v\n%s", err, out)
	}
	path := filepath.Join(mnt, strings.TrimPrefix(snap, "ns/"+e.ns+"/"), "disk.img")
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, src.imgData) {
		t.Fatalf("read through the background mount: %v, %d bytes", err, len(b))
	}
}
