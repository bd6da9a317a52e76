package restore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sys/unix"
)

const cs = 64 << 10

var randBytes = storetest.RandSeeded

// fixture backs up an image with data, holes, written zeros and repeated
// chunks and returns the store, the open index and the image bytes.
func fixture(t *testing.T) (*store.Store, index.Index, []byte) {
	t.Helper()
	s := storetest.NewStore(t)
	img := make([]byte, 40*cs+777)
	copy(img, randBytes(6*cs, 1))
	copy(img[10*cs:], img[:2*cs])           // repeated chunks
	copy(img[30*cs+5:], randBytes(3*cs, 2)) // unaligned data
	copy(img[40*cs:], randBytes(777, 3))    // short tail
	path := filepath.Join(t.TempDir(), "img")
	if err := os.WriteFile(path, img, 0o644); err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(path)
	defer f.Close()
	b, err := s.StartBackup(context.Background(), store.Group{Type: "vm", ID: "r"}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := b.AddImage(context.Background(), "disk.img", f, store.ImageOptions{ChunkSize: cs}); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadManifest(b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.OpenSnapshotIndex(b.Snapshot(), m, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return s, x, img
}

func TestImageToFileSparse(t *testing.T) {
	s, x, img := fixture(t)
	var outs [][]byte
	for _, threads := range []int{1, 8} {
		path := filepath.Join(t.TempDir(), "out")
		f, _ := os.Create(path)
		os.WriteFile(path, bytes.Repeat([]byte{0xff}, 50*cs), 0o644) // old content must go
		rep, err := Image(context.Background(), x, s, Target{File: f}, Options{Threads: threads})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if !bytes.Equal(got, img) {
			t.Fatalf("threads %d: restored image differs", threads)
		}
		if rep.Bytes != int64(len(img)) || rep.ZeroBytes == 0 {
			t.Fatalf("report %+v", rep)
		}
		var st syscall.Stat_t
		syscall.Stat(path, &st)
		if st.Blocks*512 >= int64(len(img)) {
			t.Fatalf("threads %d: %d bytes allocated for a %d-byte image with holes", threads, st.Blocks*512, len(img))
		}
		outs = append(outs, got)
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Fatal("1 and 8 threads differ")
	}
}

func TestImageToStream(t *testing.T) {
	s, x, img := fixture(t)
	for _, threads := range []int{1, 3, 8} {
		var buf bytes.Buffer
		if _, err := Image(context.Background(), x, s, Target{Stream: &buf}, Options{Threads: threads}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), img) {
			t.Fatalf("threads %d: stream differs", threads)
		}
	}
}

func TestImageCorruptChunk(t *testing.T) {
	s, x, img := fixture(t)
	d, start, end := x.Chunk(3)
	p := s.ChunkPath(d)
	blob, _ := os.ReadFile(p)
	blob[len(blob)-1] ^= 1
	os.WriteFile(p, blob, 0o644)

	var buf bytes.Buffer
	_, err := Image(context.Background(), x, s, Target{Stream: &buf}, Options{Threads: 4})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("archive offset 196608")) {
		t.Fatalf("want an error naming offset %d, got %v", start, err)
	}
	buf.Reset()
	rep, err := Image(context.Background(), x, s, Target{Stream: &buf}, Options{Threads: 4, IgnoreErrors: true})
	if !errors.Is(err, ErrDamaged) || len(rep.Damaged) != 1 || rep.Damaged[0].Offset != start || rep.Damaged[0].Length != end-start {
		t.Fatalf("ignore-errors: %v %+v", err, rep)
	}
	want := bytes.Clone(img)
	copy(want[start:end], make([]byte, end-start))
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatal("damaged range is not zeros, or the rest differs")
	}
}

// TestImageENOSPC: a target that is full gives a clear error, no hang.
func TestImageENOSPC(t *testing.T) {
	s, x, _ := fixture(t)
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Image(ctx, x, s, Target{File: f}, Options{Threads: 4})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("want ENOSPC, got %v", err)
	}
}

// TestImageENOSPCFile: a regular file on a full file system (a small
// tmpfs, as root), written with O_DIRECT where the file system takes it:
// ENOSPC comes back, named, with no hang.
func TestImageENOSPCFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	s, x, _ := fixture(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=256k"); err != nil {
		t.Skip("cannot mount tmpfs:", err)
	}
	defer unix.Unmount(dir, 0)
	f, err := os.Create(filepath.Join(dir, "img"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Image(ctx, x, s, Target{File: f}, Options{Threads: 4})
	if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("want ENOSPC naming an offset, got %v", err)
	}
	if strings.Contains(err.Error(), "/proc/") || !strings.Contains(err.Error(), f.Name()) {
		t.Fatalf("the error does not name the file %s: %v", f.Name(), err)
	}
}

// cancelWriter cancels the restore at its first write, as a reader of
// stdout that goes away would end it.
type cancelWriter struct{ cancel func() }

func (w cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return len(p), nil
}

// TestImageStreamCancelUnmaps: an ordered restore that ends early leaves
// no chunk file mapped, whether its chunk was queued, loaded or held by
// the writer.
func TestImageStreamCancelUnmaps(t *testing.T) {
	s, x, _ := fixture(t)
	chunks := filepath.Join(s.Root(), ".chunks")
	for range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Image(ctx, x, s, Target{Stream: cancelWriter{cancel}}, Options{Threads: 4})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled restore: %v", err)
		}
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps")
	}
	if strings.Contains(string(maps), chunks) {
		t.Fatalf("chunk files still mapped after cancelled restores:\n%s", maps)
	}
}

// TestImageIndexCut: an index file cut while open fails the restore with
// the index's error, to a file and to a stream, even with IgnoreErrors
// (the entries past the cut are empty: the image would not be whole).
func TestImageIndexCut(t *testing.T) {
	s, x, _ := fixture(t)
	if err := os.Truncate(x.Path(), 4096); err != nil {
		t.Fatal(err)
	}
	for _, ignore := range []bool{false, true} {
		var buf bytes.Buffer
		_, err := Image(context.Background(), x, s, Target{Stream: &buf}, Options{Threads: 2, IgnoreErrors: ignore})
		if !errors.Is(err, index.ErrFault) || !strings.Contains(err.Error(), x.Path()) {
			t.Fatalf("stream, ignore-errors=%v: %v, want the index fault naming %s", ignore, err, x.Path())
		}
		f, err := os.Create(filepath.Join(t.TempDir(), "img"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = Image(context.Background(), x, s, Target{File: f}, Options{Threads: 2, IgnoreErrors: ignore})
		f.Close()
		if !errors.Is(err, index.ErrFault) {
			t.Fatalf("file, ignore-errors=%v: %v, want the index fault", ignore, err)
		}
	}
}
