package pxar_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
)

// A crafted archive whose goodbye tables list each directory from every
// directory above it: followed, 40 levels are 2^38 entries. The listing
// of a directory decodes its content front to back, where only the real
// subdirectory is, so the first directory whose table lists another ends
// the walk (its entries are not those of its table); a Walker would also
// refuse a second listing of a directory (ErrSharedDir).
func TestWalkerSharedDirs(t *testing.T) {
	const n = 40
	meta, payload := hostile.Encode(hostile.SharedDirs(n))
	acc, err := pxar.NewAccessor(t.Context(), bytes.NewReader(meta), int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	w := acc.Walk(acc.Root())
	entries := 0
	hostile.InTime(t, "walk shared directories", func() {
		for {
			_, _, err = w.Next(t.Context())
			if err != nil {
				return
			}
			entries++
		}
	})
	shared := errors.Is(err, pxar.ErrSharedDir) || errors.Is(err, pxar.ErrCorrupt) && strings.Contains(err.Error(), "its goodbye table lists")
	if !shared || errors.Is(err, io.EOF) || entries > 2*n {
		t.Fatalf("after %d entries: %v, want %v or a listing that does not match its table", entries, err, pxar.ErrSharedDir)
	}
}
