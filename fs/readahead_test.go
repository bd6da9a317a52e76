package fs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/internal/directio"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sys/unix"
)

// sparseImage backs up an image of 48 chunks: data in chunks 0, 20-27
// and 40-41, holes (zero chunks) between them and at the end.
func sparseImage(t *testing.T, id string) (store.Snapshot, []byte) {
	t.Helper()
	f := testFixture(t)
	data := randomData(77, 48*testChunk, testChunk, 19*testChunk, 28*testChunk, 12*testChunk, 42*testChunk, 6*testChunk)
	snap, err := f.backup(snapSpec{g: newGroup(id), at: t0, images: map[string][]byte{"disk.img": data}})
	if err != nil {
		t.Fatal(err)
	}
	return snap, data
}

// TestMountRandomDirectReads has 8 readers of one sparse image, each
// reading 4 KiB pages at random offsets with O_DIRECT (every read a FUSE
// request, as fio --direct=1 does): misses of different chunks run at
// once, readers of one chunk share its load, every page is compared with
// the source.
func TestMountRandomDirectReads(t *testing.T) {
	snap, want := sparseImage(t, "randread")
	srv, mnt, _ := mountT(t, Options{})
	p := filepath.Join(mnt, snap.String(), "disk.img")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() { errs <- directReads(p, want, uint64(i)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if st := srv.Stats(); st.ZeroHits == 0 || st.CacheMisses == 0 {
		t.Errorf("stats: %+v, want zero-chunk hits and misses", st)
	}
}

// directReads reads 200 random 4 KiB pages of p with O_DIRECT.
func directReads(p string, want []byte, seed uint64) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var b []byte
	buf := directio.Buf(&b, 4096)
	r := rand.New(rand.NewPCG(seed, 9))
	for range 200 {
		off := int64(r.IntN(len(want)/4096)) * 4096
		n, err := preadRetry(fd, buf, off)
		if err != nil || n != len(buf) {
			return fmt.Errorf("read at %d: %d bytes, %v", off, n, err)
		}
		if !bytes.Equal(buf, want[off:off+4096]) {
			return fmt.Errorf("read at %d: content differs", off)
		}
	}
	return nil
}

// TestMountSparseSequential reads a sparse image from start to end, as
// cp does: the data past each hole is loaded ahead and everything reads
// back; then, with the first data chunk past a hole damaged, the reads
// of that chunk fail with EIO (never other bytes) though it was loaded
// ahead, and every other chunk still reads.
func TestMountSparseSequential(t *testing.T) {
	snap, want := sparseImage(t, "sparseseq")
	srv, mnt, _ := mountT(t, Options{})
	p := filepath.Join(mnt, snap.String(), "disk.img")
	got, err := os.ReadFile(p)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back: %d bytes, %v; equal %v", len(got), err, bytes.Equal(got, want))
	}
	if st := srv.Stats(); st.PrefetchLoads == 0 || st.ZeroHits == 0 {
		t.Errorf("stats: %+v, want loads ahead and zero-chunk hits", st)
	}

	f := testFixture(t)
	x, err := index.Open(filepath.Join(f.s.SnapshotPath(snap), "disk.img.fidx"))
	if err != nil {
		t.Fatal(err)
	}
	bad, _, _ := x.Chunk(40)
	x.Close()
	defer damageChunk(t, f.s.ChunkPath(bad), false)()
	_, mnt2, _ := mountT(t, Options{})
	fh, err := os.Open(filepath.Join(mnt2, snap.String(), "disk.img"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, 32<<10)
	for off := 0; off < len(want); off += len(buf) {
		n, err := fh.ReadAt(buf, int64(off))
		inBad := off/testChunk == 40
		switch {
		case inBad && !errors.Is(err, syscall.EIO):
			t.Fatalf("read at %d (the damaged chunk): %d bytes, %v, want EIO", off, n, err)
		case !inBad && err != nil && !(errors.Is(err, io.EOF) && n == len(buf)):
			t.Fatalf("read at %d: %v", off, err)
		case !inBad && !bytes.Equal(buf[:n], want[off:off+n]):
			t.Fatalf("read at %d: content differs", off)
		}
	}
}
