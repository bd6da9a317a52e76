package test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/test/e2e"
)

// syncReport is the part of `cairn sync --json` (and of the sync job's
// result) the tests read.
type syncReport struct {
	Copied       int   `json:"snapshots_copied"`
	Skipped      int   `json:"snapshots_skipped"`
	Failed       int   `json:"snapshots_failed"`
	Removed      int   `json:"snapshots_removed"`
	Kept         int   `json:"snapshots_kept"`
	ChunksCopied int64 `json:"chunks_copied"`
	ChunksReused int64 `json:"chunks_reused"`
	Snapshots    []struct {
		Snapshot, Outcome, Error string
	} `json:"snapshots"`
}

// syncSource backs up three images and a directory tree into a
// namespace of the shared store; it returns the store, the namespace,
// the image snapshots and their data.
func syncSource(t *testing.T) (st, ns string, snaps []string, imgs [][]byte) {
	st = e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("sync")
	base := e2e.RandBytes(2<<20, seed)
	for i := range 3 {
		img := bytes.Clone(base)
		copy(img[i*256<<10:], e2e.RandBytes(256<<10, seed+uint64(i)+1))
		imgs = append(imgs, img)
		snaps = append(snaps, e2e.TapeBackup(t, st, ns, "1", fmt.Sprintf("2024-05-0%dT10:00:00Z", i+1), img))
	}
	src := t.TempDir()
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("f%d", i)), e2e.RandBytes(10<<10+i, seed+100+uint64(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e2e.MustCairn(t, "--store", st, "backup", "--ns", ns, "--type", "host", "--id", "files", "--no-sync", "tree.pxar:"+src)
	return st, ns, snaps, imgs
}

// TestSyncCLI copies a namespace into a new store with the binary, reads
// it back, verifies it, finds nothing to do the second time, and fails
// cleanly on a corrupt source chunk.
func TestSyncCLI(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	st, ns, snaps, imgs := syncSource(t)
	dst := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-"), "copy")
	e2e.MustCairn(t, "--store", dst, "init")

	var rep syncReport
	e2e.DecodeJSON(t, e2e.MustCairn(t, "sync", "--from", st, "--to", dst, "--ns", ns, "--json"), &rep)
	if rep.Copied != 4 || rep.Failed != 0 || rep.ChunksCopied == 0 {
		t.Fatalf("first sync: %+v", rep)
	}
	for i, s := range snaps {
		r := e2e.MustCairn(t, "--store", dst, "cat", s, "disk.img")
		if !bytes.Equal([]byte(r.Stdout), imgs[i]) {
			t.Fatalf("%s reads back different from the copy", s)
		}
	}
	e2e.MustCairn(t, "--store", dst, "verify", "--ns", ns)

	e2e.DecodeJSON(t, e2e.MustCairn(t, "--store", dst, "sync", "--from", st, "--ns", ns, "--json"), &rep)
	if rep.Copied != 0 || rep.Skipped != 4 || rep.ChunksCopied != 0 {
		t.Fatalf("second sync: %+v", rep)
	}

	// a new snapshot whose one new chunk is corrupt in the source
	img := append(bytes.Clone(imgs[2][:1<<20]), e2e.RandBytes(1<<20, 999)...)
	bad := e2e.TapeBackup(t, st, ns, "1", "2024-05-09T10:00:00Z", img)
	d := chunk.Sum(img[1<<20 : 1<<20+256<<10])
	path := filepath.Join(st, ".chunks", d.String()[:4], d.String())
	other, _ := chunk.EncodeBlob(nil, e2e.RandBytes(256<<10, 998), true)
	if err := os.WriteFile(path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	r := e2e.Cairn(t, nil, "sync", "--from", st, "--to", dst, "ns/"+ns+"/vm/1")
	if r.Code != 3 || !strings.Contains(r.Stdout+r.Stderr, d.String()) {
		t.Fatalf("corrupt chunk: exit %d\n%s\n%s", r.Code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(dst, bad)); err == nil {
		t.Fatalf("%s: left in the target after a failed copy", bad)
	}
	e2e.MustCairn(t, "--store", dst, "verify", "--ns", ns)

	for _, args := range [][]string{{"sync", "--to", dst}, {"sync", "--from", st, "--to", dst, "vm/x/y/z"},
		{"sync", "--from", st, "--to", dst, "ns/" + ns + "/vm/1/latest", "--remove-vanished"}} {
		if r := e2e.Cairn(t, nil, args...); r.Code != 2 {
			t.Errorf("%v: exit %d, want 2 (usage)\n%s", args, r.Code, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "sync", "--from", dst, "--to", dst); r.Code == 0 || !strings.Contains(r.Stderr, "same store") {
		t.Errorf("sync into itself: exit %d %s", r.Code, r.Stderr)
	}
}

// TestSyncFromMount runs the sync job through the target's mount, as a
// cron job would, with remove-vanished.
func TestSyncFromMount(t *testing.T) {
	st, ns, snaps, _ := syncSource(t)
	dst := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-"), "copy")
	e2e.MustCairn(t, "--store", dst, "init")
	mnt := e2e.MountStore(t, dst)
	control := filepath.Join(mnt, ".jobs", "sync", "control")
	write := func(line string) error { return os.WriteFile(control, []byte(line+"\n"), 0o200) }
	if err := write("start from=relative/dir"); err == nil {
		t.Fatal("a relative source was accepted")
	}
	if err := write("start from=" + st + " group=ns/" + ns + "/vm/1"); err != nil {
		t.Fatal(err)
	}
	var res struct {
		State  string     `json:"state"`
		Result syncReport `json:"result"`
	}
	id := e2e.JobStatus(t, mnt, "sync", "", &res)
	if res.State != "ok" || res.Result.Copied != 3 {
		t.Fatalf("sync job: %+v", res)
	}
	e2e.MustCairn(t, "--store", st, "forget", snaps[0], snaps[1])
	e2e.MustCairn(t, "--store", dst, "protect", snaps[0])
	if err := write("start from=" + st + " group=ns/" + ns + "/vm/1 remove-vanished=1"); err != nil {
		t.Fatal(err)
	}
	e2e.JobStatus(t, mnt, "sync", id, &res)
	if res.State != "ok" || res.Result.Removed != 1 || res.Result.Kept != 1 {
		t.Fatalf("remove-vanished job: %+v", res)
	}
	for i, s := range snaps {
		_, err := os.Stat(filepath.Join(dst, s))
		if gone := err != nil; gone != (i == 1) {
			t.Errorf("%s: gone=%v after remove-vanished", s, gone)
		}
	}
}

// TestSyncCLIRemote: the binary copies local -> MinIO -> local; a second
// directory attached to the bucket (another host) reads the copies.
// The keys reach cairn in AWS_* variables only.
func TestSyncCLIRemote(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	run := func(args ...string) e2e.Result {
		t.Helper()
		r := e2e.Cairn(t, env, args...)
		if r.Code != 0 {
			t.Fatalf("cairn %s: exit %d\n%s\n%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		return r
	}
	initRemote := func(dir string) {
		run("--store", dir, "init", "--s3", "s3://"+bucket+"/store", "--endpoint", srv.Endpoint, "--path-style", "--region", "us-east-1")
	}
	st, ns, snaps, imgs := syncSource(t)
	remote := filepath.Join(t.TempDir(), "remote")
	initRemote(remote)
	var rep syncReport
	e2e.DecodeJSON(t, run("sync", "--from", st, "--to", remote, "--ns", ns, "--json"), &rep)
	if rep.Copied != 4 || rep.ChunksCopied == 0 {
		t.Fatalf("local -> remote: %+v", rep)
	}
	run("--store", remote, "verify", "--ns", ns)
	e2e.DecodeJSON(t, run("sync", "--from", st, "--to", remote, "--ns", ns, "--json"), &rep)
	if rep.Copied != 0 || rep.ChunksCopied != 0 {
		t.Fatalf("second sync: %+v", rep)
	}

	other := filepath.Join(t.TempDir(), "other")
	initRemote(other)
	local := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-"), "local")
	e2e.MustCairn(t, "--store", local, "init")
	e2e.DecodeJSON(t, run("sync", "--from", other, "--to", local, "--ns", ns, "--json"), &rep)
	if rep.Copied != 4 {
		t.Fatalf("remote -> local: %+v", rep)
	}
	for i, s := range snaps {
		for _, dir := range []string{other, local} {
			if r := run("--store", dir, "cat", s, "disk.img"); !bytes.Equal([]byte(r.Stdout), imgs[i]) {
				t.Fatalf("%s reads back different from %s", s, dir)
			}
		}
	}
	e2e.MustCairn(t, "--store", local, "verify", "--ns", ns)
}

// TestSyncKilled kills syncs (SIGKILL) at several points: the target
// verifies after each, and a last sync completes the copy, replacing
// what the killed ones left unfinished.
func TestSyncKilled(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	st, ns, snaps, imgs := syncSource(t)
	dst := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-"), "copy")
	e2e.MustCairn(t, "--store", dst, "init")
	for _, after := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond} {
		cmd := exec.Command(e2e.Binary(), "sync", "--from", st, "--to", dst, "--ns", ns)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(after) // a point in the copy, not a measurement
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		e2e.MustCairn(t, "--store", dst, "verify", "--ns", ns)
	}
	var rep syncReport
	e2e.DecodeJSON(t, e2e.MustCairn(t, "sync", "--from", st, "--to", dst, "--ns", ns, "--json"), &rep)
	if rep.Copied+rep.Skipped != 4 || rep.Failed != 0 {
		t.Fatalf("sync after killed ones: %+v", rep)
	}
	for i, s := range snaps {
		if r := e2e.MustCairn(t, "--store", dst, "cat", s, "disk.img"); !bytes.Equal([]byte(r.Stdout), imgs[i]) {
			t.Fatalf("%s reads back different", s)
		}
	}
	e2e.MustCairn(t, "--store", dst, "verify", "--ns", ns)
}
