package cli

import (
	"strings"

	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/filearchive"
)

// treeTotals counts what a tree restore's display knows ahead (restore.TreeTotal).
func (a *app) treeTotals(o restoreOpts, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive,
	c *chunkcache.Cache) restore.TreeTotal {
	t := restore.TreeTotal{Archive: ar.Name}
	if strings.Trim(o.path, "/") != "" || len(o.include) > 0 || len(o.exclude) > 0 {
		return t
	}
	n, ok, err := filearchive.CountFiles(a.ctx, s, snap, m, ar, c)
	if err != nil { // only the display lacks it; the restore reports what is wrong
		a.logger.Debug("restore: files not counted", "archive", ar.Name, "err", err)
	}
	if ok && err == nil {
		t.Files = n
	}
	return t
}
