package usage

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// Bytes are a set of distinct chunks counted two ways, and how many.
type Bytes struct {
	Chunks  int64 `json:"chunks"`
	Logical int64 `json:"logical"` // plain data, as the indexes give it
	Stored  int64 `json:"stored"`  // chunk files, as on disk
}

func (b *Bytes) add(e *entry) {
	b.Chunks++
	b.Logical += int64(e.logical)
	b.Stored += int64(e.stored)
}

// Sub returns b less o.
func (b Bytes) Sub(o Bytes) Bytes {
	return Bytes{Chunks: b.Chunks - o.Chunks, Logical: b.Logical - o.Logical, Stored: b.Stored - o.Stored}
}

// Usage is what a snapshot or a group references.
type Usage struct {
	// Total is every distinct chunk it references.
	Total Bytes `json:"total"`
	// Unique is the chunks nothing else references: what forgetting it
	// frees after garbage collection. Total less Unique is shared.
	Unique Bytes `json:"unique"`
	// Files and FileBytes are its snapshot directories' own files
	// (indexes, blobs, manifest): removed with it, never shared.
	Files     int64 `json:"files"`
	FileBytes int64 `json:"file_bytes"`
}

// Shared is the chunks it shares with other snapshots (other groups).
func (u Usage) Shared() Bytes { return u.Total.Sub(u.Unique) }

// Freed is what forgetting it frees on disk: its unique chunks' stored
// bytes and its own files.
func (u Usage) Freed() int64 { return u.Unique.Stored + u.FileBytes }

// Snapshot is one snapshot's usage.
type Snapshot struct {
	store.SnapshotInfo
	Usage
	// Err is why (some of) its indexes could not be read; its chunks
	// from those are not counted.
	Err error
}

// Group is one group's usage: its chunks counted once however many of
// its snapshots reference them; unique means no other group's.
type Group struct {
	store.Group
	Snapshots int
	Usage
}

// Report is a pass over a whole store.
type Report struct {
	// Snapshots and Groups are every snapshot directory and group of the
	// store, in Store.Walk's order.
	Snapshots []Snapshot
	Groups    []Group
	// All is every distinct chunk referenced (Unique: by one snapshot).
	All Usage
	// Removed is what removing Options.Remove's snapshots would free:
	// chunks referenced by them and by nothing else (Unique; Total has
	// every chunk they reference), and their files.
	Removed Usage
	// Missing counts referenced chunks without a chunk file.
	Missing int64
	// StoredKnown is false where stored sizes are not read (a store on
	// object storage): every Stored is then 0.
	StoredKnown bool
	// Errors are what could not be read (snapshots, groups); the
	// figures leave it out.
	Errors []error
}

// Options tune Compute.
type Options struct {
	// Remove names the snapshots whose removal Report.Removed prices.
	Remove func(store.Snapshot) bool
	// Workers read snapshots side by side (0: 4).
	Workers int
}

// Compute makes one pass over every index of every snapshot of s.
func Compute(ctx context.Context, s *store.Store, opt Options) (*Report, error) {
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	_, local := s.ChunkDiskDir()
	m := &merger{s: s, opt: opt, index: map[chunk.Digest]int32{}, rep: &Report{StoredKnown: local}}
	if err := m.run(ctx); err != nil {
		return nil, err
	}
	m.finish()
	return m.rep, nil
}

// skippable reports whether a walk error is one garbage collection
// passes over too: a group removed while walked, a stray file.
func skippable(err error) bool {
	return errors.Is(err, store.ErrNotFound) || errors.Is(err, unix.ENOTDIR)
}

// walkErr records an error of the walk; a namespace that cannot be
// listed ends it (Walk ends then), a group's is recorded.
func (m *merger) walkErr(err error) {
	if !skippable(err) {
		m.rep.Errors = append(m.rep.Errors, fmt.Errorf("walk: %w", err))
	}
}
