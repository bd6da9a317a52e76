package browse

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/cairnfs/cairn/store/pxar"
)

// MaxDepth bounds how deep ls -R and find descend, as a tree restore
// does: a real file system cannot hold a deeper tree (PATH_MAX), and a
// crafted archive nested deeper is reported, not followed.
const MaxDepth = 4096

// Walk walks a file archive depth first in stored order, one
// directory listing open per level (pxar.SortedDirReader: a few KiB,
// whatever the directory's size): memory grows with the depth, never with
// the size of a directory or of the tree.
type Walk struct {
	Acc *pxar.Accessor
	// Visit is called for every entry with its path; for a directory it
	// returns whether to descend into it.
	Visit func(path string, e *pxar.Entry, depth int) (descend bool, err error)
	// Fail is told of a directory that could not be listed (whole or in
	// part); the walk goes on with the next one.
	Fail func(path string, err error)
}

type walkFrame struct {
	r    *pxar.SortedDirReader
	plen int // length of the directory's path in the buffer
}

// join appends name to the path in buf[:n] ("" is the walk's start).
func join(buf []byte, n int, name string) []byte {
	buf = buf[:n]
	if n > 0 && buf[n-1] != '/' {
		buf = append(buf, '/')
	}
	return append(buf, name...)
}

// Run walks start, whose path is startPath. It returns an error only when
// the walk cannot go on (ctx ended, or Visit failed: a write error).
func (w *Walk) Run(ctx context.Context, start *pxar.Entry, startPath string) error {
	buf := []byte(startPath)
	descend, err := w.Visit(startPath, start, 0)
	if err != nil || !descend || !start.IsDir() {
		return err
	}
	var stack []walkFrame
	lastDir := start.ID // directories come in increasing offset order
	open := func(e *pxar.Entry, path string) {
		if len(stack)+1 > MaxDepth {
			w.Fail(path, fmt.Errorf("directories nested deeper than %d levels: not listed", MaxDepth))
			return
		}
		r, err := w.Acc.ReadDirSorted(ctx, e)
		if err != nil {
			w.Fail(path, err)
			return
		}
		stack = append(stack, walkFrame{r: r, plen: len(buf)})
	}
	open(start, startPath)
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		e, err := top.r.Next(ctx)
		if errors.Is(err, io.EOF) {
			stack = stack[:len(stack)-1]
			continue
		}
		if err == nil && e.IsDir() {
			if e.ID <= lastDir {
				err = fmt.Errorf("%q: %w", e.Name, pxar.ErrSharedDir)
			}
			lastDir = max(lastDir, e.ID)
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			w.Fail(string(buf[:top.plen]), err) // the rest of this directory cannot be read
			stack = stack[:len(stack)-1]
			continue
		}
		buf = join(buf, top.plen, e.Name)
		path := string(buf)
		descend, err := w.Visit(path, e, len(stack))
		if err != nil {
			return err
		}
		if descend && e.IsDir() {
			open(e, path)
		}
	}
	return ctx.Err()
}
