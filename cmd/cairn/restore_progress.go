package main

import (
	"strings"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// treeTotal is what a tree restore's display knows ahead: the regular
// files of the whole archive (no --path, --include or --exclude), counted
// from its stat table; 0: unknown (no stat table: a single stream, an
// archive made by PBS). Its content bytes are not known ahead: the
// payload stream's size also holds the parts of reused chunks no file
// uses (metadata mode), often a third more.
type treeTotal struct {
	archive string
	files   int64
}

func (a *app) treeTotals(o restoreOpts, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive,
	c *store.Cache) treeTotal {
	t := treeTotal{archive: ar.Name}
	if strings.Trim(o.path, "/") != "" || len(o.include) > 0 || len(o.exclude) > 0 {
		return t
	}
	n, ok, err := filearchive.CountFiles(a.ctx, s, snap, m, ar, c)
	if err != nil { // only the display lacks it; the restore reports what is wrong
		a.logger.Debug("restore: files not counted", "archive", ar.Name, "err", err)
	}
	if ok && err == nil {
		t.files = n
	}
	return t
}

// sample is the display of a tree restore: no zeroes (all-zero blocks of
// files stay holes, which says little of a tree).
func (t treeTotal) sample(st *restore.Stats) progress.Sample {
	return progress.Sample{Archive: t.archive, Bytes: st.Bytes.Load(), Items: st.Files.Load(), ItemsTotal: t.files,
		ItemsName: "files"}
}
