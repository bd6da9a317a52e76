package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// TestRegisterWriterBesideProbes: writers register while the writers'
// files are probed as OldestWriter (a GC) probes them, a shared lock for
// an instant (held a little longer here): registering waits the probe
// out. With LOCK_NB it failed ("resource temporarily unavailable"), and
// so did a backup started beside a GC (TestGCRacesBackups, under load).
func TestRegisterWriterBesideProbes(t *testing.T) {
	s := testStore(t)
	w, err := s.RegisterWriter() // makes the directory
	if err != nil {
		t.Fatal(err)
	}
	w.Done()
	dir := filepath.Join(s.root, writersDir)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			names, _ := fsutil.ReadNames(dir)
			for _, n := range names {
				if strings.HasPrefix(n, newWriterPrefix) {
					probeHolding(filepath.Join(dir, n))
				}
			}
		}
	}()
	defer func() { close(stop); <-done }()
	for i := range 300 {
		w, err := s.RegisterWriter()
		if err != nil {
			t.Fatalf("registration %d: %v", i, err)
		}
		w.Done()
	}
}

// probeHolding takes a shared lock on path and holds it a moment.
func probeHolding(path string) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) == nil {
		for range 2000 {
			os.Getpid()
		}
	}
}
