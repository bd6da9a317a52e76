package fs

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/internal/directio"
	"golang.org/x/sys/unix"
)

// recycleImage backs up an image of 12 chunks of 4 MiB (the size whose
// buffers the cache recycles): random (stored plain, used in place of
// the blob read), compressible (decoded by zstd) and zero chunks.
func recycleImage(t *testing.T) (string, []byte) {
	t.Helper()
	const cs = 4 << 20
	f := testFixture(t)
	data := randomData(91, 12*cs, 7*cs, cs, 11*cs, cs)
	for _, c := range []int{2, 5, 6, 9} { // compressible, each its own
		var b bytes.Buffer
		for i := 0; b.Len() < cs; i++ {
			fmt.Fprintf(&b, "chunk %d line %d of the recycling test\n", c, i)
		}
		copy(data[c*cs:(c+1)*cs], b.Bytes())
	}
	snap, err := f.backup(snapSpec{g: newGroup("recycle"), at: t0, chunk: cs,
		images: map[string][]byte{"disk.img": data}})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(snap.String(), "disk.img"), data
}

// TestMountRecycledBuffers reads an image through a cache of 16 MiB
// (three chunks) with 8 readers at once, every read a FUSE request
// (O_DIRECT): 4 read 4 KiB pages at random, 4 read the whole image in
// 256 KiB requests from different starts. Chunks are evicted all the
// time, so their buffers are recycled while other replies are still
// written from the chunks in them: every byte is compared with the
// source, and the buffers must have been reused.
func TestMountRecycledBuffers(t *testing.T) {
	rel, want := recycleImage(t)
	srv, mnt, _ := mountT(t, Options{CacheSize: 16 << 20})
	p := filepath.Join(mnt, rel)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 4 {
		wg.Go(func() { errs <- directReads(p, want, uint64(100+i)) })
		wg.Go(func() { errs <- directSequential(p, want, i*len(want)/4) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	st := srv.Stats()
	t.Logf("stats: %+v", st)
	if st.BuffersReused == 0 || st.BuffersNew == 0 {
		t.Errorf("buffers reused %d, new %d: want both", st.BuffersReused, st.BuffersNew)
	}
	if st.CacheSize != 16<<20 {
		t.Errorf(".stats cache_size %d, want %d", st.CacheSize, 16<<20)
	}
}

// directSequential reads all of p with O_DIRECT in 256 KiB requests,
// from start to the end and on from the beginning up to start.
func directSequential(p string, want []byte, start int) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	const bs = 256 << 10
	var b []byte
	buf := directio.Buf(&b, bs)
	start -= start % bs
	for i := 0; i < len(want); i += bs {
		off := (start + i) % len(want)
		n, err := preadRetry(fd, buf, int64(off))
		if err != nil || n != bs {
			return fmt.Errorf("read at %d: %d bytes, %v", off, n, err)
		}
		if !bytes.Equal(buf, want[off:off+bs]) {
			return fmt.Errorf("read at %d: content differs", off)
		}
	}
	return nil
}

// preadRetry is pread, again after EINTR: the runtime's preemption
// signals interrupt a FUSE read in flight.
func preadRetry(fd int, buf []byte, off int64) (int, error) {
	for {
		n, err := unix.Pread(fd, buf, off)
		if err != unix.EINTR {
			return n, err
		}
	}
}
