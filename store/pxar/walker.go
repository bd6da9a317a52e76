package pxar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
)

// MaxWalkDepth bounds how deep a Walker descends: a deeper directory is
// an error (ErrTooDeep), as the tree restore refuses one.
const MaxWalkDepth = 4096

// ErrTooDeep is returned by Walker.Next for directories nested deeper
// than MaxWalkDepth below the walk's start.
var ErrTooDeep = errors.New("directories nested too deep")

// ErrSharedDir is a directory a crafted archive lists in two places: a
// goodbye table points into a region walked already. In an archive
// written by an encoder, directories come in increasing offset order in a
// depth-first walk in stored order; followed, shared directories make a
// walk exponential in the archive's size (a 40-level archive of a few KiB
// would list 2^38 entries).
var ErrSharedDir = errors.New("directory stored inside one listed already (a crafted archive)")

// Walker visits a directory tree of an archive depth first, each
// directory before its entries, the entries of a directory in stored
// order: for archives written by Encoder (and by PBS) that is byte-wise
// name order, so paths come sorted component by component, and two walks
// can be merged in step. It holds one SortedDirReader (a few KiB,
// whatever the directory's size) per open directory level, so memory
// grows with depth, never with the size of a directory or of the tree.
type Walker struct {
	a     *Accessor
	start *Entry
	stack []walkLevel
	next  *Entry // a directory returned by Next, entered by the next call
	path  string // its path
	begun bool
	last  uint64 // the offset (ID) of the last directory returned
}

type walkLevel struct {
	path string // "" for the start
	r    *SortedDirReader
}

// Walk starts a walk of start (a directory or any other entry, which is
// then the walk's only entry).
func (a *Accessor) Walk(start *Entry) *Walker { return &Walker{a: a, start: start} }

// Next returns the next entry and its path relative to the walk's start:
// "" for the start itself, then "name", "dir/name"… It returns io.EOF
// after the last entry. Errors name the directory being read. After an
// error other than ctx's, Next may be called again: the walk goes on
// after what failed (an entry that does not decode, such as one with an
// invalid name, a directory that cannot be listed, is too deep or is
// shared: left out with everything below it; a directory whose listing
// cannot go on (SortedDirReader.Err): the rest of it).
func (w *Walker) Next(ctx context.Context) (string, *Entry, error) {
	if !w.begun {
		w.begun = true
		if w.start.Kind == KindDir {
			w.next, w.path, w.last = w.start, "", w.start.ID
		}
		return "", w.start, nil
	}
	if w.next != nil {
		dir, path := w.next, w.path
		w.next = nil
		if len(w.stack) >= MaxWalkDepth {
			return "", nil, fmt.Errorf("%s: %w (more than %d levels)", dir.Path(), ErrTooDeep, MaxWalkDepth)
		}
		r, err := w.a.ReadDirSorted(ctx, dir)
		if err != nil {
			return "", nil, err
		}
		w.stack = append(w.stack, walkLevel{path: path, r: r})
	}
	for len(w.stack) > 0 {
		top := &w.stack[len(w.stack)-1]
		e, err := top.r.Next(ctx)
		if errors.Is(err, io.EOF) {
			w.stack = w.stack[:len(w.stack)-1]
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", nil, err
			}
			dir := cmp.Or(top.path, ".")
			if top.r.Err() != nil {
				w.stack = w.stack[:len(w.stack)-1] // the rest of it cannot be read
			}
			return "", nil, fmt.Errorf("in directory %s: %w", dir, err)
		}
		path := e.Name
		if top.path != "" {
			path = top.path + "/" + e.Name
		}
		if e.Kind == KindDir {
			if e.ID <= w.last {
				return "", nil, fmt.Errorf("%s: %w", e.Path(), ErrSharedDir)
			}
			w.last = e.ID
			w.next, w.path = e, path
		}
		return path, e, nil
	}
	return "", nil, io.EOF
}

// SkipDir leaves out the entries of the directory Next returned last.
func (w *Walker) SkipDir() { w.next = nil }
