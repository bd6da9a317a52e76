package userfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/userfile/userfiletest"
)

// within runs f and fails the test if it has not returned within a
// minute: what it tests is that nothing blocks, and a blocked open would
// otherwise hang the whole test binary.
func within(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("still blocked after a minute")
	}
}

func TestOpenRefuses(t *testing.T) {
	for path, kind := range userfiletest.NotRegular(t) {
		want := "is " + kind + ", not a regular file"
		for _, o := range []Options{0, Pipe} {
			within(t, func() {
				f, _, err := Open(path, o)
				if err == nil {
					f.Close()
					t.Errorf("%s (options %d) opened", path, o)
					return
				}
				if !errors.Is(err, ErrNotRegular) || err.Error() != path+": "+want {
					t.Errorf("%s (options %d): %v, want %q", path, o, err, path+": "+want)
				}
			})
			within(t, func() {
				if _, err := Read(path, 1<<20, o); !errors.Is(err, ErrNotRegular) {
					t.Errorf("Read %s: %v", path, err)
				}
			})
		}
	}
}

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		b, err := Read(p, 8, 0)
		if err != nil || string(b) != "content\n" {
			t.Errorf("Read %s: %q %v", p, b, err)
		}
	}
	if _, err := Read(file, 7, 0); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), file) {
		t.Errorf("over the limit: %v", err)
	}
	if _, _, err := Open(link, NoFollow); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a symbolic link") {
		t.Errorf("symlink with NoFollow: %v", err)
	}
	if _, _, err := Open(file, NoFollow); err != nil {
		t.Errorf("regular file with NoFollow: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 8, 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}

// TestOpenPipe: with Pipe an anonymous pipe is read as a stream (what
// <(…) and /dev/stdin give); without it, it is refused.
func TestOpenPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := w.WriteString("secret\n"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	path := "/proc/self/fd/" + strconv.Itoa(int(r.Fd()))
	if _, _, err := Open(path, 0); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "is a FIFO") {
		t.Errorf("pipe without Pipe: %v", err)
	}
	within(t, func() {
		b, err := Read(path, 64, Pipe)
		if err != nil || string(b) != "secret\n" {
			t.Errorf("pipe with Pipe: %q %v", b, err)
		}
	})
}
