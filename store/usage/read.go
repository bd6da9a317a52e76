package usage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// ref is one distinct chunk of a snapshot and its logical size.
type ref struct {
	d    chunk.Digest
	size uint32
}

// batch is what a worker read of one snapshot (or a walk error).
type batch struct {
	info      store.SnapshotInfo
	refs      []ref // distinct, sorted by digest
	files     int64
	fileBytes int64
	err       error // indexes that could not be read
	walkErr   error // not a snapshot: an error of the walk
	gone      bool  // forgotten while walked
}

// readSnapshot lists a snapshot directory (its files and their sizes)
// and reads every index in it, as garbage collection's mark does
// (Store.SnapshotIndexFiles' rule: names ending in .fidx or .didx, not
// hidden); it lists the directory itself, since it wants the sizes too.
func readSnapshot(ctx context.Context, s *store.Store, si store.SnapshotInfo) batch {
	b := batch{info: si}
	ents, err := os.ReadDir(s.SnapshotPath(si.Snapshot))
	if errors.Is(err, fs.ErrNotExist) {
		b.gone = true
		return b
	}
	if err != nil {
		b.err = fmt.Errorf("snapshot %s: %w", si.Snapshot, err)
		return b
	}
	var errs []error
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue // gone meanwhile, or not a file forget counts
		}
		b.files++
		b.fileBytes += fi.Size()
		name := e.Name()
		if _, ok := index.Kind(name); !ok || strings.HasPrefix(name, ".") {
			continue
		}
		if ctx.Err() != nil {
			b.err = ctx.Err()
			return b
		}
		if err := b.readIndex(s, name); err != nil {
			errs = append(errs, err)
		}
	}
	b.err = errors.Join(errs...)
	b.refs = distinct(b.refs)
	return b
}

// readIndex appends one index's chunks to b.refs; an index that cannot
// be read adds none, and its error names the snapshot and the file.
func (b *batch) readIndex(s *store.Store, name string) error {
	x, err := s.OpenIndexFile(b.info.Snapshot, name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, store.ErrNotFound) {
		return nil // removed with its snapshot meanwhile
	}
	if err != nil {
		return fmt.Errorf("snapshot %s: index %s: %w", b.info.Snapshot, name, err)
	}
	defer x.Close()
	n0 := len(b.refs)
	for i := range x.Len() {
		d, start, end := x.Chunk(i)
		b.refs = append(b.refs, ref{d: d, size: uint32(max(0, min(end-start, chunk.MaxBlobSize)))})
	}
	if err := x.Err(); err != nil {
		b.refs = b.refs[:n0]
		return fmt.Errorf("snapshot %s: index %s: %w", b.info.Snapshot, name, err)
	}
	return nil
}

// distinct sorts refs by digest and keeps each digest once.
func distinct(refs []ref) []ref {
	slices.SortFunc(refs, func(a, b ref) int { return cmpDigest(&a.d, &b.d) })
	return slices.CompactFunc(refs, func(a, b ref) bool { return a.d == b.d })
}

func cmpDigest(a, b *chunk.Digest) int { return bytes.Compare(a[:], b[:]) }
