package backupsrc

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
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
	in, err := Open([]Spec{{Name: "disk.img", Path: img}, {Name: "root.pxar", Path: dir}}, nil)
	if err != nil || in.Total() != 4096 {
		t.Fatalf("open: %v, total %d", err, in.Total())
	}
	in.Close()
	in, err = Open([]Spec{{Name: "disk.img", Path: img}, {Name: "s.img", Path: "-"}}, strings.NewReader("x"))
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
		if _, err := Open([]Spec{c.spec}, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.spec, err, c.want)
		}
	}
	if _, err := Open([]Spec{{Name: "x.blob", Path: big}}, nil); !errors.Is(err, store.ErrBlobTooLarge) {
		t.Errorf("a blob too large: %v", err)
	}
}
