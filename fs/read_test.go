package fs

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/store/index"
)

// TestConcurrentReaders has 16 readers at random offsets of one file and
// 16 readers of different files, all compared with the source.
func TestConcurrentReaders(t *testing.T) {
	f := testFixture(t)
	_, mnt, _ := mountT(t, Options{})
	one := "vm/100/2024-01-01T01:00:00Z/disk.img"
	all := keys(f.files)
	slices.Sort(all)

	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 16 {
		wg.Go(func() { errs <- randomReads(filepath.Join(mnt, one), f.files[one], uint64(i)) })
		rel := all[i%len(all)]
		wg.Go(func() {
			got, err := os.ReadFile(filepath.Join(mnt, rel))
			if err == nil && !bytes.Equal(got, f.files[rel]) {
				err = fmt.Errorf("%s: content differs", rel)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// randomReads reads 64 random ranges of p through one handle.
func randomReads(p string, want []byte, seed uint64) error {
	fh, err := os.Open(p)
	if err != nil {
		return err
	}
	defer fh.Close()
	r := rand.New(rand.NewPCG(seed, 7))
	buf := make([]byte, 300<<10)
	for range 64 {
		off := r.IntN(len(want))
		n := 1 + r.IntN(len(buf))
		got, err := fh.ReadAt(buf[:n], int64(off))
		if err != nil && got != len(want)-off {
			return fmt.Errorf("%s: read %d at %d: %v", p, n, off, err)
		}
		if !bytes.Equal(buf[:got], want[off:off+got]) {
			return fmt.Errorf("%s: read %d at %d: content differs", p, n, off)
		}
	}
	return nil
}

// TestCorruptChunk flips a byte in one chunk and removes another: reads
// of exactly those chunks fail with EIO and are logged once, naming
// snapshot, archive, offset and digest; every other range reads fine.
func TestCorruptChunk(t *testing.T) {
	f := testFixture(t)
	data := randomData(40, 8*testChunk)
	snap, err := f.backup(snapSpec{g: newGroup("corrupt"), at: t0,
		images: map[string][]byte{"disk.img": data}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := index.Open(filepath.Join(f.s.SnapshotPath(snap), "disk.img.fidx"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt, _, _ := x.Chunk(3)
	missing, _, _ := x.Chunk(5)
	x.Close()
	restore := damageChunk(t, f.s.ChunkPath(corrupt), false)
	defer restore()
	restoreMissing := damageChunk(t, f.s.ChunkPath(missing), true)
	defer restoreMissing()

	srv, mnt, logs := mountT(t, Options{})
	fh, err := os.Open(filepath.Join(mnt, snap.String(), "disk.img"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	const page = 4096
	buf := make([]byte, page)
	for off := 0; off < len(data); off += page {
		_, err := fh.ReadAt(buf, int64(off))
		bad := off/testChunk == 3 || off/testChunk == 5
		switch {
		case bad && !errors.Is(err, syscall.EIO):
			t.Errorf("read at %d (a damaged chunk): %v, want EIO", off, err)
		case !bad && err != nil:
			t.Errorf("read at %d (a good chunk): %v", off, err)
		case !bad && !bytes.Equal(buf, data[off:off+page]):
			t.Errorf("read at %d: content differs", off)
		}
	}
	for _, d := range []string{corrupt.String(), missing.String()} {
		var lines []string
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, d) {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Errorf("%d log lines name chunk %s, want 1:\n%s", len(lines), d, strings.Join(lines, "\n"))
			continue
		}
		for _, want := range []string{"read failed", "snapshot=" + snap.String(), "archive=disk.img", "offset="} {
			if !strings.Contains(lines[0], want) {
				t.Errorf("log line lacks %q: %s", want, lines[0])
			}
		}
	}
	if st := srv.Stats(); st.ReadErrors == 0 || st.ChunkErrors == 0 {
		t.Errorf("stats do not count the failures: %+v", st)
	}
}

// damageChunk flips a byte of a chunk file, or moves it away, and returns
// how to undo it (other tests read the same store).
func damageChunk(t *testing.T, path string, remove bool) func() {
	t.Helper()
	orig, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if remove {
		err = os.Remove(path)
	} else {
		bad := bytes.Clone(orig)
		bad[len(bad)/2] ^= 0x40
		err = os.WriteFile(path, bad, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			t.Errorf("restore %s: %v", path, err)
		}
	}
}
