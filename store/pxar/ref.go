package pxar

import (
	"context"
	"fmt"
)

// Ref is a compact handle of an entry (32 bytes): enough to decode it
// again with Reload, so that a holder of many entries (a mount's looked
// up inodes) keeps their metadata in the archive rather than in memory.
// The zero Ref is the root's.
type Ref struct {
	at   uint64 // offset of its FILENAME item
	size uint64 // its goodbye item's size
	end  uint64 // its directory's GOODBYE item
	hash uint64 // its name's hash
}

// Ref returns e's handle.
func (e *Entry) Ref() Ref { return e.ref }

// Words is r as four words, for a holder that keeps refs of several
// kinds inline; RefOfWords makes it a Ref again (Reload checks it as it
// checks any Ref).
func (r Ref) Words() [4]uint64 { return [4]uint64{r.at, r.size, r.end, r.hash} }

// RefOfWords is the Ref whose Words are w.
func RefOfWords(w [4]uint64) Ref { return Ref{at: w[0], size: w[1], end: w[2], hash: w[3]} }

// Reload decodes the entry r names, as the lookup or listing that found
// it did (hard links resolved); its Path is its name alone.
func (a *Accessor) Reload(ctx context.Context, r Ref) (*Entry, error) {
	if r == (Ref{}) {
		return a.root, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if r.at == 0 || r.at >= r.end || r.end > a.meta.size {
		return nil, corrupt(streamMeta, r.at, "entry reference [%d, %d) outside the archive", r.at, r.end)
	}
	// A directory seen from its child alone: its content starts at the
	// child, its goodbye table where the reference says.
	dir := &Entry{Kind: KindDir, dirContent: r.at, goodbyeOfs: r.end}
	e, err := a.decodeChild(dir, goodbyeItem{hash: r.hash, offset: r.end - r.at, size: r.size}, nil)
	if err != nil {
		return nil, fmt.Errorf("entry at %d: %w", r.at, err)
	}
	e.parent = nil
	return e, nil
}
