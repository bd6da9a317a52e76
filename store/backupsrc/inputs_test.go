package backupsrc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// TestOpen: sources are checked before anything is written: a missing
// file, a directory as a blob, a tree that is no directory, a blob too
// large; a stream's size is unknown.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "disk")
	if err := os.WriteFile(img, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := Open(t.Context(), []Spec{{Name: "disk.img", Path: img}, {Name: "root.pxar", Path: dir}}, nil)
	if err != nil || in.Total() != 4096 {
		t.Fatalf("open: %v, total %d", err, in.Total())
	}
	in.Close()
	in, err = Open(t.Context(), []Spec{{Name: "disk.img", Path: img}, {Name: "s.img", Path: "-"}}, strings.NewReader("x"))
	if err != nil || in.Total() != 0 {
		t.Fatalf("with a stream: %v, total %d", err, in.Total())
	}
	in.Close()
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, store.MaxBlobData+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Name: "x.img", Path: filepath.Join(dir, "missing")}, "no such file"},
		{Spec{Name: "x.blob", Path: dir}, "is a directory"},
		{Spec{Name: "x.pxar", Path: img}, "is not a directory"},
		{Spec{Name: "x.blob", Path: big}, "NAME.img:PATH instead"},
	} {
		if _, err := Open(t.Context(), []Spec{c.spec}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	if _, err := Open(t.Context(), []Spec{{Name: "x.blob", Path: big}}, nil); !errors.Is(err, store.ErrBlobTooLarge) {
		t.Errorf("a blob too large: %v", err)
	}
}

// A FIFO no writer opens does not hold a backup past its end: the open
// returns ctx's error when ctx ends, and lets go of the FIFO; a read
// from a pipe whose writer sends nothing ends when ctx does.
func TestOpenFIFOCancel(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	spec := []Spec{{Name: "disk.img", Path: fifo}}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Open(ctx, spec, nil); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), fifo) {
		t.Fatalf("open of a FIFO without writer, cancelled: %v", err)
	}

	// A writer that opens the FIFO and writes nothing: Open returns, the
	// read waits until ctx ends.
	ctx, cancel = context.WithCancel(t.Context())
	w := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		w <- f
	}()
	in, err := Open(ctx, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if wf := <-w; wf != nil {
		defer wf.Close()
	}
	read := make(chan error, 1)
	go func() {
		_, err := in.srcs[0].Read(make([]byte, 10))
		read <- err
	}()
	cancel()
	if err := <-read; !errors.Is(err, os.ErrClosed) {
		t.Fatalf("read after the end: %v, want the file closed", err)
	}
}
