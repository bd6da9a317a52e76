package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// treeSummary is what a file archive restore reports.
type treeSummary struct {
	Snapshot  string              `json:"snapshot"`
	Archive   string              `json:"archive"`
	Path      string              `json:"path,omitempty"`
	Target    string              `json:"target"`
	Files     int64               `json:"files"`
	Dirs      int64               `json:"dirs"`
	Others    int64               `json:"others"`
	Bytes     int64               `json:"bytes"`
	ZeroBytes int64               `json:"zero_bytes"`
	Seconds   float64             `json:"seconds"`
	MBps      float64             `json:"mb_per_s"`
	Failed    []restore.PathError `json:"failed"`
	Include   []string            `json:"include,omitempty"`
	Exclude   []string            `json:"exclude,omitempty"`
	// An interrupted restore: where the walk stopped and the marker
	// file it left in the target directory.
	Interrupted bool   `json:"interrupted,omitempty"`
	StoppedAt   string `json:"stopped_at,omitempty"`
	Marker      string `json:"marker,omitempty"`
	Removed     bool   `json:"removed,omitempty"`
}

func newTreeSummary(o restoreOpts, rep *restore.TreeReport, snap store.Snapshot, ar store.Archive, path, target string, el time.Duration) treeSummary {
	sum := treeSummary{Snapshot: snap.String(), Archive: ar.Name, Path: path, Target: target, Files: rep.Files,
		Dirs: rep.Dirs, Others: rep.Others, Bytes: rep.Bytes, ZeroBytes: rep.ZeroBytes, Seconds: el.Seconds(),
		MBps: progress.MBps(rep.Bytes, el), Failed: rep.Failed, Include: o.include, Exclude: o.exclude,
		StoppedAt: rep.StoppedAt, Marker: rep.Marker, Removed: rep.Removed}
	if sum.Failed == nil {
		sum.Failed = []restore.PathError{}
	}
	return sum
}

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
		return total.sample(stats)
	})
	rep, err := restore.Tree(a.ctx, acc, start, path, target, restore.TreeOptions{Threads: o.threads, Overwrite: o.force,
		Filter: filter, Stats: stats, Logger: a.logger})
	if rep == nil {
		prog.Stop()
		return err
	}
	if err != nil && a.ctx.Err() != nil {
		prog.Stop()
		return a.treeInterrupted(o, newTreeSummary(o, rep, snap, ar, path, target, time.Since(began)), err)
	}
	if !o.noSync {
		if serr := restore.SyncTree(target); serr != nil {
			prog.Stop()
			return serr
		}
	}
	prog.Stop()
	el := time.Since(began)
	sum := newTreeSummary(o, rep, snap, ar, path, target, el)
	if o.json {
		printJSON(a, sum)
	} else {
		for _, f := range rep.Failed {
			fmt.Fprintf(a.stderr, "not restored: %s: %s\n", quoteName(f.Path), escapeText(f.Err))
		}
		if err == nil { // zeroes: of sparse files' holes, not shown when none
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
