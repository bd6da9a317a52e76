package test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/test/e2e"
)

// hostileStore makes a store with `cairn init` holding a good snapshot, a
// victim (good, for cutting its indexes), one snapshot per class of
// hostile index, all sharing chunks, and snapshots ct/fifo-manifest and
// ct/fifo-blob whose manifest or blob is a FIFO.
func hostileStore(t *testing.T) (st string, good, victim store.Snapshot, want []byte, cases map[string]store.Snapshot) {
	t.Helper()
	st = e2e.OwnStore(t, "cairn-e2e-")
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	c, err := hostile.PutChunks(s, "e2e hostile", 64, hostile.ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	if good, want, err = hostile.WriteGood(ctx, s, store.Group{Type: store.TypeVM, ID: "good"}, t0, c); err != nil {
		t.Fatal(err)
	}
	if victim, _, err = hostile.WriteGood(ctx, s, store.Group{Type: store.TypeVM, ID: "victim"}, t0, c); err != nil {
		t.Fatal(err)
	}
	cases = map[string]store.Snapshot{}
	for _, ic := range hostile.IndexCases() {
		if cases[ic.Name], err = hostile.WriteIndexCase(ctx, s, store.Group{Type: store.TypeVM, ID: ic.Name}, t0, ic, c); err != nil {
			t.Fatal(err)
		}
	}
	fm, fb, err := hostile.WriteFIFOs(ctx, s, store.Group{Type: store.TypeCT, ID: "fifo-manifest"},
		store.Group{Type: store.TypeCT, ID: "fifo-blob"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	cases["fifo-manifest"], cases["fifo-blob"] = fm, fb
	return st, good, victim, want, cases
}

// TestCatVerifyHostileIndexes: cat and verify of every hostile snapshot
// exit non-zero with a message naming the index file, in bounded time;
// the good snapshot that shares the chunks cats and verifies fine.
func TestCatVerifyHostileIndexes(t *testing.T) {
	t.Parallel() // a store of its own (hostileStore): its verify runs meet no other test's
	st, good, _, want, cases := hostileStore(t)
	for _, ic := range hostile.IndexCases() {
		t.Run(ic.Name, func(t *testing.T) {
			snap := cases[ic.Name].String()
			r := e2e.CairnBounded(t, "--store", st, "cat", snap, ic.Archive())
			if r.Code == 0 || !strings.Contains(r.Stderr, ic.File) || len(r.Stdout) >= len(want) {
				t.Errorf("cat: exit %d, %d bytes out, stderr %q; want an error naming %s", r.Code, len(r.Stdout), r.Stderr, ic.File)
			}
			if strings.Contains(r.Stderr, "panic") || strings.Contains(r.Stderr, "goroutine ") {
				t.Errorf("cat panicked: %s", r.Stderr)
			}
			r = e2e.CairnBounded(t, "--store", st, "verify", snap)
			if r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, ic.File) {
				t.Errorf("verify: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
			}
		})
	}
	for _, name := range []string{"fifo-manifest", "fifo-blob"} {
		snap := cases[name].String()
		r := e2e.CairnBounded(t, "--store", st, "cat", snap, hostile.BlobFile)
		if r.Code == 0 || !strings.Contains(r.Stderr, "not a regular file") {
			t.Errorf("cat %s: exit %d, stderr %q", name, r.Code, r.Stderr)
		}
		if r = e2e.CairnBounded(t, "--store", st, "verify", snap); r.Code == 0 {
			t.Errorf("verify %s: exit 0\n%s%s", name, r.Stdout, r.Stderr)
		}
	}
	for _, archive := range []string{"disk.img", "data"} {
		r := e2e.CairnBounded(t, "--store", st, "cat", good.String(), archive)
		if r.Code != 0 || r.Stdout != string(want) {
			t.Errorf("cat good %s: exit %d, %d bytes of %d, stderr %s", archive, r.Code, len(r.Stdout), len(want), r.Stderr)
		}
	}
	if r := e2e.CairnBounded(t, "--store", st, "verify", good.String()); r.Code != 0 {
		t.Errorf("verify good: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// readAll reads a file in 128 KiB requests and returns what it read and
// the first error.
func readAll(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var got []byte
	buf := make([]byte, 128<<10)
	for {
		n, err := fh.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

// TestMountHostileIndexes mounts the store with the binary: every read of
// a hostile snapshot fails with EIO within 5 s; cutting an open, partly
// read index file fails the next read with EIO (no SIGBUS); the mount
// process lives on and the good snapshot reads correctly afterwards.
func TestMountHostileIndexes(t *testing.T) {
	st, good, victim, want, cases := hostileStore(t)
	mnt := e2e.MountStore(t, st)
	checkGood := func() {
		t.Helper()
		for _, archive := range []string{"disk.img", "data"} {
			var got []byte
			var err error
			hostile.InTime(t, "read good "+archive, func() { got, err = readAll(filepath.Join(mnt, good.String(), archive)) })
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("good %s: %v, %d bytes of %d", archive, err, len(got), len(want))
			}
		}
	}
	checkGood()
	for _, name := range []string{"fifo-manifest", "fifo-blob"} {
		hostile.InTime(t, "list "+name, func() { os.ReadDir(filepath.Join(mnt, cases[name].String())) })
		hostile.InTime(t, "read "+name, func() { readAll(filepath.Join(mnt, cases[name].String(), hostile.BlobFile)) })
	}
	for _, ic := range hostile.IndexCases() {
		var err error
		hostile.InTime(t, ic.Name, func() { _, err = readAll(filepath.Join(mnt, cases[ic.Name].String(), ic.Archive())) })
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s: %v, want EIO", ic.Name, err)
		}
	}
	for _, file := range []string{hostile.FixedFile, hostile.DynamicFile} {
		archive := strings.TrimSuffix(strings.TrimSuffix(file, ".fidx"), ".didx")
		fh, err := os.Open(filepath.Join(mnt, victim.String(), archive))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4096)
		if _, err := fh.ReadAt(buf, 0); err != nil {
			t.Fatalf("victim %s: %v", archive, err)
		}
		if err := os.Truncate(filepath.Join(st, victim.String(), file), 0); err != nil {
			t.Fatal(err)
		}
		hostile.InTime(t, "read of a cut index", func() { _, err = fh.ReadAt(buf, int64(len(want))-2*hostile.ChunkSize) })
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("victim %s after its index was cut: %v, want EIO", archive, err)
		}
		fh.Close()
	}
	checkGood()
	if mounts, err := os.ReadFile("/proc/self/mounts"); err != nil || !strings.Contains(string(mounts), " "+mnt+" ") {
		t.Errorf("the mount at %s is gone (%v)", mnt, err)
	}
}
