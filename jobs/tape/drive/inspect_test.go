package drive

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenNeedsDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "none")
	if _, err := Open(context.Background(), missing); !errors.Is(err, ErrNoDrive) {
		t.Fatalf("missing dir: %v", err)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("Open created the directory")
	}
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if _, err := Open(context.Background(), file); !errors.Is(err, ErrNoDrive) {
		t.Fatalf("file: %v", err)
	}
	if _, err := Inspect(missing); !errors.Is(err, ErrNoDrive) {
		t.Fatalf("inspect missing dir: %v", err)
	}
}

// Inspect lists the tapes while another holder has the drive locked.
func TestInspectWhileLocked(t *testing.T) {
	d := openDrive(t)
	if err := d.CreateTape("A", 4<<20); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("A"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, d, []byte("label"))
	tapes, err := Inspect(d.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if len(tapes) != 1 || tapes[0].Label != "A" || tapes[0].Files != 1 || tapes[0].Used != 256<<10 ||
		tapes[0].Capacity != 4<<20 || !tapes[0].Loaded {
		t.Fatalf("inspect: %+v", tapes)
	}
}
