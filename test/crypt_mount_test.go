package test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// Encrypted snapshots in the mount, on tape, with gc and master-key
// recovery, and bad key files (fixtures: crypt_fixtures_test.go).

// TestCryptMount: a mount with the key reads the encrypted snapshot as
// the data backed up, and a verify started through its control file uses
// its key; a mount without it answers EACCES for that snapshot (with one
// log line) and reads the plain one. No key material in ps, logs or
// .jobs status.
func TestCryptMount(t *testing.T) {
	t.Parallel()
	// a store of its own: its verify job holds the store's verify lock,
	// which a `cairn verify` of a test sharing the store would meet
	e := newCryptEnv(t, contractStore(t))
	src := e.source(t, 3)
	snap := e.backup(t, "enc", src, "--keyfile", e.none)
	plain := e.backup(t, "plain", src)
	mnt, pid, logFile := e2e.DaemonMount(t, e.st, "--ns", e.ns, "--keyfile", e.none)
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
	status := e2e.WaitJob(t, filepath.Join(jobs, "status"))
	if e2e.JobState(t, status) != "ok" {
		t.Errorf("verify through the mount: %s", status)
	}
	jobLog, _ := os.ReadFile(filepath.Join(jobs, "log"))
	noKeyMaterial(t, ".jobs/verify status and log", status+string(jobLog), material)

	bare, _, bareLog := e2e.DaemonMount(t, e.st, "--ns", e.ns)
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
//
// The master key pair is the one crypt/keyfile/testdata's independent
// Python implementation made (`key create-master` is TestCLIKeyMaster's),
// and the lost key file is under scrypt at N=1024 (writeScryptKey): the
// recovered file keeps the lost one's parameters, and each of the six
// commands deriving it took 2.6 CPU-s under -race at PBS's N=65536.
func TestCryptTapeGCRecover(t *testing.T) {
	t.Parallel()
	st := contractStore(t) // a store of its own
	e := newCryptEnv(t, st)
	src := e.source(t, 4)
	td, _ := filepath.Abs("../crypt/keyfile/testdata")
	mpw := e2e.WritePass(t, e.dir, "mpw", "master pass")
	lost := filepath.Join(e.dir, "lost.key")
	writeScryptKey(t, lost, "correct horse battery") // e.pw's
	snap := e.backup(t, "enc", src, "--keyfile", lost, "--password-file", e.pw, "--master-pubkey", filepath.Join(td, "master-public.pem"))
	plain := e.backup(t, "plain", src)
	gone := e.backup(t, "gone", cryptSource{img: src.img, tree: src.tree, blob: src.blob}, "--keyfile", e.none)
	fpLost := shortFP(t, lost)
	if err := os.Remove(lost); err != nil {
		t.Fatal(err)
	}

	// gc after forgetting one encrypted snapshot keeps the others whole.
	e2e.MustCairn(t, "--store", st, "forget", gone)
	e2e.MustCairn(t, "--store", st, "gc", "--atime-cutoff", "0s")
	recovered := filepath.Join(e.dir, "recovered.key")
	r := e2e.Cairn(t, []string{"CAIRN_MASTER_PASSWORD_FILE=" + mpw}, "--store", st, "key", "recover",
		"--master-key", filepath.Join(td, "master-private.pem"), "--snapshot", snap, recovered)
	if r.Code != 0 || shortFP(t, recovered) != fpLost {
		t.Fatalf("recover from the snapshot: exit %d %s", r.Code, r.Stderr)
	}
	key := []string{"--keyfile", recovered, "--password-file", e.pw}
	if r := e2e.Cairn(t, nil, append([]string{"--store", st, "cat", snap, "disk.img"}, key...)...); r.Code != 0 || r.Stdout != string(src.imgData) {
		t.Fatalf("cat with the recovered key after gc: exit %d %s", r.Code, r.Stderr)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "cat", plain, "disk.img"); r.Code != 0 || r.Stdout != string(src.imgData) {
		t.Fatalf("cat of the plain snapshot after gc: exit %d %s", r.Code, r.Stderr)
	}
	wrapped := e2e.Cairn(t, nil, "--store", st, "cat", snap, "rsa-encrypted.key.blob")
	if wrapped.Code != 0 || len(wrapped.Stdout) != 512 {
		t.Fatalf("cat of the wrapped key without the key: exit %d, %d bytes %s", wrapped.Code, len(wrapped.Stdout), wrapped.Stderr)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "verify", "--ns", e.ns, "--keyfile", recovered, "--password-file", e.pw); r.Code != 0 {
		t.Fatalf("verify after gc: exit %d %s %s", r.Code, r.Stdout, r.Stderr)
	}

	drive := t.TempDir()
	e2e.MustCairn(t, "--store", st, "tape", "export", "--drive", drive, "--pool", "c", "--tape-size", "16M", snap)
	dst := contractStore(t) // a tape restore is a job: its lock is the store's, so a store of its own
	e2e.MustCairn(t, append([]string{"--store", dst, "tape", "restore", "--drive", drive, snap}, key...)...)
	if r := e2e.Cairn(t, nil, append([]string{"--store", dst, "cat", snap, "root.pxar", "sub/big.bin"}, key...)...); r.Code != 0 || r.Stdout != string(src.file) {
		t.Fatalf("cat after tape restore: exit %d %s", r.Code, r.Stderr)
	}
	missingKey(t, e2e.Cairn(t, nil, "--store", dst, "cat", snap, "disk.img"), snap, fpLost)
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
	st := e2e.SharedStore(t)
	e := newCryptEnv(t, st)
	good, _ := os.ReadFile(e.scrypt)
	bad := map[string][]byte{
		"truncated.key": good[:len(good)/2],
		"argon.key":     bytes.Replace(good, []byte(`{"Scrypt":`), []byte(`{"Argon2":`), 1),
	}
	for name, data := range bad {
		path := writeFile(t, filepath.Join(e.dir, name), data)
		r := e2e.Cairn(t, nil, "--store", st, "cat", "host/none/latest", "disk.img", "--keyfile", path, "--password-file", e.pw)
		if r.Code != 1 || r.Stdout != "" || !strings.Contains(r.Stderr, path) || strings.Contains(r.Stderr, "panic") {
			t.Errorf("%s: exit %d %s", name, r.Code, r.Stderr)
		}
	}
	missing := filepath.Join(e.dir, "missing.key")
	if r := e2e.Cairn(t, nil, "--store", st, "ls", "host/none/latest", "--keyfile", missing); r.Code != 1 || !strings.Contains(r.Stderr, missing) {
		t.Errorf("missing key file: exit %d %s", r.Code, r.Stderr)
	}
	if r := e2e.Cairn(t, []string{"CAIRN_KEYFILE=" + missing}, "--store", st, "snapshots", "--ns", e.ns); r.Code != 0 {
		t.Errorf("snapshots with $CAIRN_KEYFILE naming a missing file: exit %d %s", r.Code, r.Stderr)
	}
}

// TestCryptMountDaemonPrompt: mount --daemon asks for the key file's
// passphrase at the terminal (a pseudo-terminal of Python's pty module)
// and the background mount reads the encrypted snapshot with it.
func TestCryptMountDaemonPrompt(t *testing.T) {
	t.Parallel()
	e2e.NeedFUSE(t)
	needTerminal(t)
	e := newCryptEnv(t, e2e.SharedStore(t))
	src := e.source(t, 5)
	snap := e.backup(t, "tty", src, "--keyfile", e.scrypt, "--password-file", e.pw)
	mnt, logFile := t.TempDir(), filepath.Join(e.dir, "mount.log")
	out, err := atTerminal([][2]string{{"passphrase of the key file(s): ", "correct horse battery"}},
		e2e.Binary(), "--store", e.st, "mount", "--daemon", "--log-file", logFile, "--ns", e.ns, "--keyfile", e.scrypt, mnt)
	t.Cleanup(func() { e2e.Cairn(t, nil, "umount", "--lazy", mnt) })
	if err != nil || !strings.Contains(string(out), "passphrase") || strings.Contains(string(out), "correct horse") {
		t.Fatalf("mount --daemon at a terminal: %v\n%s", err, out)
	}
	path := filepath.Join(mnt, strings.TrimPrefix(snap, "ns/"+e.ns+"/"), "disk.img")
	if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, src.imgData) {
		t.Fatalf("read through the background mount: %v, %d bytes", err, len(b))
	}
}
