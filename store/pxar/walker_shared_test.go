package pxar_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
)

// A crafted archive whose goodbye tables list each directory from every
// directory above it: followed, 40 levels are 2^38 entries. The Walker
// refuses the second listing and ends at once.
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
	if !errors.Is(err, pxar.ErrSharedDir) || errors.Is(err, io.EOF) || entries > 2*n {
		t.Fatalf("after %d entries: %v, want %v", entries, err, pxar.ErrSharedDir)
	}
}
