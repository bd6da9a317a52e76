package filearchive

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// Progress is what AddArchive has stored so far, for a display that
// reads it while the backup runs.
type Progress struct {
	Bytes atomic.Int64 // content bytes of the files stored, read or reused
	Files atomic.Int64 // regular files stored (hard links aside)
	// Ref holds the reference archive's totals once the reuse plan has
	// walked it (metadata mode): roughly what this backup will store.
	// Nil until then, and when no reference was walked (the first
	// backup, data or legacy mode).
	Ref atomic.Pointer[Totals]
}

// Totals counts the regular files of an archive and their content bytes.
type Totals struct{ Files, Bytes int64 }

// CountFiles returns how many regular files (hard links aside) split
// archive ar of snapshot snap holds, from its stat table: about 6 bytes
// read a file, not a walk of the archive. ok is false when the archive
// has no stat table (a single stream, or made by PBS).
func CountFiles(ctx context.Context, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive,
	c *chunkcache.Cache) (n int64, ok bool, err error) {
	name := StatTableName(ar.Name)
	if _, has := m.File(name); !has || ar.Kind != store.ArchiveSplitPxar {
		return 0, false, nil
	}
	x, err := s.OpenSnapshotIndex(snap, m, name)
	if err != nil {
		return 0, false, err
	}
	defer x.Close()
	r := chunkcache.NewReader(ctx, x, c, chunkcache.DefaultReadahead)
	sr, err := newStatReader(x.Path(), io.NewSectionReader(r, 0, x.Size()))
	if err != nil {
		return 0, false, err
	}
	for {
		if err := sr.read(); err != nil {
			return 0, false, err
		}
		if sr.eof {
			return n, true, x.Err()
		}
		n++
	}
}
