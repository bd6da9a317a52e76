package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// restoreTree restores a file archive (or --path inside it) into target.
func (a *app) restoreTree(o restoreOpts, s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive, target string) error {
	if target == "-" {
		return usageErr("a file archive restores into a directory, not to stdout")
	}
	var began time.Time
	filter, err := restore.NewFilter(o.include, o.exclude)
	if err != nil {
		return usageErr("%v", err)
	}
	c, err := store.NewCache(s, o.cacheBytes)
	if err != nil {
		return err
	}
	defer c.Close()
	acc, closeArchive, err := filearchive.Open(a.ctx, s, snap, m, ar, c)
	if err != nil {
		return err
	}
	defer closeArchive()
	start := acc.Root()
	path := strings.Trim(o.path, "/")
	if path != "" {
		if start, err = acc.LookupPath(a.ctx, path); err != nil {
			return fmt.Errorf("snapshot %s archive %s: %s: %w", snap, ar.Name, path, err)
		}
	}
	stats := new(restore.Stats)
	total := a.treeTotals(o, s, snap, m, ar, c)
	began = time.Now()
	prog := a.showProgress("restore", func() progress.Sample {
		return total.Sample(stats)
	})
	rep, err := restore.Tree(a.ctx, acc, start, path, target, restore.TreeOptions{Threads: o.threads, Overwrite: o.force,
		Filter: filter, Stats: stats, Logger: a.logger})
	if rep == nil {
		prog.Stop()
		return err
	}
	if err != nil && a.ctx.Err() != nil {
		prog.Stop()
		return a.treeInterrupted(o, restore.NewTreeSummary(rep, snap.String(), ar.Name, path, target, o.include, o.exclude, time.Since(began)), err)
	}
	if !o.noSync {
		if serr := restore.SyncTree(target); serr != nil {
			prog.Stop()
			return serr
		}
	}
	prog.Stop()
	el := time.Since(began)
	sum := restore.NewTreeSummary(rep, snap.String(), ar.Name, path, target, o.include, o.exclude, el)
	if o.json {
		printJSON(a, sum)
	} else {
		for _, f := range rep.Failed {
			fmt.Fprintf(a.stderr, "not restored: %s: %s\n", quoteName(f.Path), escapeText(f.Err))
		}
		if err == nil && !a.quiet { // zeroes: of sparse files' holes, not shown when none
			zeroes := ""
			if rep.ZeroBytes > 0 {
				zeroes = fmt.Sprintf(", zeroes=%d", rep.ZeroBytes)
			}
			fmt.Fprintf(a.stdout, "restore complete (files=%d, dirs=%d, others=%d, bytes=%d%s, duration=%.2fs, speed=%.2fMB/s)\n",
				rep.Files, rep.Dirs, rep.Others, rep.Bytes, zeroes, el.Seconds(), sum.MBps)
		}
	}
	if err != nil {
		return &codeError{code: exitPartial, err: err}
	}
	return nil
}

// restoreCacheSize parses --cache-size, the bound of a tree restore's
// chunk cache. The restore reads the payload once, in order, so the
// chunks read ahead are all it needs (the readers also keep their recent
// chunks themselves); its small default (16M) keeps the heap small, so
// decoded chunks reuse memory the runtime has freed instead of faulting
// in fresh pages (a first touch costs ~30 µs a page on a virtual machine:
// 32M instead of 16M cost a quarter more CPU time on Go's tree). It must hold one chunk of the largest size (4 MiB); the upper
// bound keeps the cache's bookkeeping, which grows with it, small.
func restoreCacheSize(flag string) (int64, error) {
	const least, most = 4 << 20, 64 << 30
	n, err := parseSize(flag)
	if err != nil {
		return 0, usageErr("--cache-size: %v", err)
	}
	if n < least || n > most {
		return 0, usageErr("--cache-size %s: want 4M to 64G", flag)
	}
	return n, nil
}
