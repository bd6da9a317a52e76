package store

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// cpuTime is the process's user and system CPU time so far: the
// machine's load makes wall time a poor measure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchImageData is 64 MiB that compresses as real disks do: random
// stretches among text-like ones.
func benchImageData() []byte {
	const size = 64 << 20
	data := randBytes(size, 61)
	line := []byte("the quick brown fox jumps over the lazy dog 0123456789\n")
	for off := 0; off < size; off += 256 << 10 {
		if (off/(256<<10))%2 == 0 {
			for p := off; p < min(off+256<<10, size); p += len(line) + int(data[p]%7) {
				copy(data[p:min(p+len(line), size)], line)
			}
		}
	}
	return data
}

// cryptBenchSetup writes the bench image and makes a key (wiped at the
// benchmark's end).
func cryptBenchSetup(b *testing.B) (string, *crypt.Key) {
	path := filepath.Join(b.TempDir(), "bench.img")
	if err := os.WriteFile(path, benchImageData(), 0o644); err != nil {
		b.Fatal(err)
	}
	key, err := crypt.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(key.Wipe)
	return path, key
}

type benchMode struct {
	name string
	key  *crypt.Key
}

// benchModes are the side-by-side runs: plain, then encrypted with key.
func benchModes(key *crypt.Key) []benchMode {
	return []benchMode{{"plain", nil}, {"encrypted", key}}
}

// BenchmarkCryptBackup backs the same image up plain and encrypted into
// a fresh store each pass (every chunk new: hashed, compressed, sealed,
// written).
func BenchmarkCryptBackup(b *testing.B) {
	path, key := cryptBenchSetup(b)
	for _, mode := range benchModes(key) {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(64 << 20)
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				s := testStore(b)
				f, _ := os.Open(path)
				b.StartTimer()
				c := cpuTime()
				bk, err := s.StartBackup(context.Background(), Group{Type: TypeVM, ID: "bench"}, time.Time{})
				if err != nil {
					b.Fatal(err)
				}
				bk.Sync = SyncNone
				if mode.key != nil {
					bk.Encrypt(mode.key)
				}
				if err := bk.AddImage(context.Background(), "disk.img", f, ImageOptions{ChunkSize: chunk.DefaultChunkSize}); err != nil {
					b.Fatal(err)
				}
				if err := bk.Finish(); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - c
				b.StopTimer()
				f.Close()
				os.RemoveAll(s.Root())
				b.StartTimer()
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkCryptRead reads the same image, stored plain and encrypted,
// through a chunkcache.Reader whose cache is smaller than the image: every
// pass loads, decrypts and decompresses every chunk.
func BenchmarkCryptRead(b *testing.B) {
	path, key := cryptBenchSetup(b)
	s := testStore(b)
	s.SetKeys(NewKeys(key))
	for i, mode := range benchModes(key) {
		snap, _ := backupKey(b, s, Group{Type: TypeVM, ID: mode.name}, keyT0.Add(time.Duration(i)*time.Hour), path, mode.key)
		b.Run(mode.name, func(b *testing.B) {
			m, err := s.ReadManifest(snap)
			if err != nil {
				b.Fatal(err)
			}
			x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
			if err != nil {
				b.Fatal(err)
			}
			defer x.Close()
			c, _ := NewCache(s, 16<<20)
			defer c.Close()
			r := chunkcache.NewReader(context.Background(), x, c, chunkcache.DefaultReadahead)
			b.SetBytes(x.Size())
			start := cpuTime()
			for b.Loop() {
				if _, err := r.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuTime()-start).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
