package fs

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"golang.org/x/sys/unix"
)

// benchImage is a 128 MiB image of 4 MiB chunks (PBS's default), backed
// up once per test binary.
var (
	benchOnce sync.Once
	benchSnap store.Snapshot
	benchErr  error
)

const benchSize = 128 << 20

func benchImage(b *testing.B) (*fixture, store.Snapshot) {
	f := testFixture(b)
	benchOnce.Do(func() {
		data := randomData(99, benchSize)
		// Make a quarter compressible, as real disks are.
		for i := 0; i < len(data)/4; i++ {
			data[i] = byte(i / 512)
		}
		benchSnap, benchErr = f.backup(snapSpec{g: store.Group{Type: "vm", ID: "bench"}, at: t0,
			images: map[string][]byte{"disk.img": data}, chunk: 4 << 20})
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return f, benchSnap
}

// readSequential reads p from start to end in 1 MiB reads, as cp does.
func readSequential(b *testing.B, p string, buf []byte) {
	fh, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{fh}, buf)
	if err != nil || n != benchSize {
		b.Fatalf("read %s: %d bytes, %v", p, n, err)
	}
}

// BenchmarkReadMountCold reads the image through a fresh mount each time:
// cairn's cache and the kernel's page cache are empty (the chunk files
// may be in the page cache of the store's filesystem).
func BenchmarkReadMountCold(b *testing.B) {
	_, snap := benchImage(b)
	buf := make([]byte, 1<<20)
	b.SetBytes(benchSize)
	for b.Loop() {
		b.StopTimer()
		srv, mnt, _ := mountBench(b)
		b.StartTimer()
		readSequential(b, filepath.Join(mnt, snap.String(), "disk.img"), buf)
		b.StopTimer()
		srv.Unmount()
		b.StartTimer()
	}
}

// BenchmarkReadDirect is what `cairn cat` does: chunkcache.Reader.WriteTo with
// a fresh cache each time.
func BenchmarkReadDirect(b *testing.B) {
	f, snap := benchImage(b)
	m, err := f.s.ReadManifest(snap)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchSize)
	for b.Loop() {
		x, err := f.s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
		if err != nil {
			b.Fatal(err)
		}
		c, err := store.NewCache(f.s, chunkcache.DefaultSize)
		if err != nil {
			b.Fatal(err)
		}
		r := chunkcache.NewReader(b.Context(), x, c, chunkcache.DefaultReadahead)
		if n, err := r.WriteTo(io.Discard); err != nil || n != benchSize {
			b.Fatalf("WriteTo: %d, %v", n, err)
		}
		c.Close()
		x.Close()
	}
}

// BenchmarkReadMountWarm reads with every chunk in cairn's cache but the
// kernel's pages of the file dropped before each read.
func BenchmarkReadMountWarm(b *testing.B) {
	_, snap := benchImage(b)
	srv, mnt, _ := mountBench(b)
	p := filepath.Join(mnt, snap.String(), "disk.img")
	buf := make([]byte, 1<<20)
	readSequential(b, p, buf)
	served := srv.Stats().ServedBytes
	b.SetBytes(benchSize)
	for b.Loop() {
		b.StopTimer()
		dropPages(b, p)
		b.StartTimer()
		readSequential(b, p, buf)
	}
	b.StopTimer()
	st := srv.Stats()
	b.ReportMetric(float64(st.ServedBytes-served)/float64(b.N)/benchSize, "served/read")
	b.ReportMetric(float64(st.CacheMisses), "misses")
}

// BenchmarkReadMountPageCache re-reads what the kernel keeps cached.
func BenchmarkReadMountPageCache(b *testing.B) {
	_, snap := benchImage(b)
	_, mnt, _ := mountBench(b)
	p := filepath.Join(mnt, snap.String(), "disk.img")
	buf := make([]byte, 1<<20)
	readSequential(b, p, buf)
	b.SetBytes(benchSize)
	for b.Loop() {
		readSequential(b, p, buf)
	}
}

// dropPages asks the kernel to drop its cached pages of p.
func dropPages(b *testing.B, p string) {
	fh, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	if err := unix.Fadvise(int(fh.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		b.Fatal(err)
	}
}

// mountBench mounts quietly (no per-line test logging).
func mountBench(b *testing.B) (*Server, string, *logtest.Buffer) {
	return mountT(b, Options{Log: discardLog})
}

var discardLog = slog.New(slog.DiscardHandler)
