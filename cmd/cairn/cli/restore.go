package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

type restoreOpts struct {
	threads                      int
	ignoreErrors, discard, force bool
	noSync                       bool
	json                         bool
	path                         string
	ns                           string
	include, exclude             []string
	cacheSize                    string
	cacheBytes                   int64 // cacheSize parsed
}

func (a *app) restoreCmd() *cobra.Command {
	var o restoreOpts
	cmd := &cobra.Command{
		Use:   "restore SNAPSHOT ARCHIVE TARGET",
		Short: "restore an image (to a file, block device or -), a file archive (to a directory) or a blob (to a file or -)",
		Long: `Restores an archive of a snapshot. Images go to a file (sparse: zero chunks stay holes),
a block device, or - for stdout (in order). Chunks are fetched, decoded (--threads at
once) and checked in parallel and written with positional writes (O_DIRECT where the
file system allows). A file is written under a temporary name beside TARGET and
renamed only when complete: an interrupted or failed restore leaves no TARGET (a
block device is written in place and cannot be: it then holds a partial image).

File archives (NAME.pxar) are restored into the directory TARGET with their
metadata (owners when root, modes, times, symlinks, hard links, xattrs, ACLs,
devices, FIFOs); --path restores a part. --include and --exclude (repeatable)
select entries with the gitignore-style patterns of backup's --exclude, matched
against paths relative to the archive root (also with --path): "*.log" anywhere,
"/etc/ssh" at the root only, "cache/" directories only, "!" to re-include; the
last matching pattern decides. An excluded directory is left out with all it
holds. With --include only what a pattern matches is restored (all of a matched
directory), and the directories on the way to it, with their metadata; excludes
still apply. A hard link whose target is left out is restored as a copy.

An interrupted tree restore (Ctrl-C, SIGTERM: exit 130, 143) says where it
stopped and leaves the file ` + restore.IncompleteMarker + ` in TARGET;
restoring again with --overwrite completes the tree and removes it. A single
file (--path naming one) is removed again. -vv names each restored entry.

Blobs (NAME.blob) are written to the file TARGET, or - for stdout.`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.restore(o, args[0], args[1], args[2])
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.threads, "threads", 0, "chunks decoded at once; more workers than that keep reads and writes in flight (default: number of CPUs; 1-64)")
	f.BoolVar(&o.ignoreErrors, "ignore-errors", false, "write zeros for damaged chunks, go on, and list the damaged ranges")
	f.BoolVar(&o.discard, "discard", false, "block devices: discard zero ranges instead of writing zeros")
	f.BoolVar(&o.force, "overwrite", false, "replace an existing target file")
	f.BoolVar(&o.noSync, "no-sync", false, "do not wait for the restored data to reach the disk before reporting completion")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	f.StringVar(&o.path, "path", "", "file archives: restore only this path inside the archive")
	f.StringArrayVar(&o.include, "include", nil, "file archives: restore only entries matching this pattern (repeatable; see above)")
	f.StringArrayVar(&o.exclude, "exclude", nil, "file archives: leave out entries matching this pattern (repeatable; see above)")
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &o.ns)
	f.StringVar(&o.cacheSize, "cache-size", "16M", "file archives: bytes of decoded chunks kept in memory (4M to 64G)")
	a.lockWaitFlag(cmd)
	return cmd
}

func (a *app) restore(o restoreOpts, ref, archive, target string) error {
	if o.threads < 0 || o.threads > restore.MaxThreads {
		return usageErr("--threads %d: want 1 to %d", o.threads, restore.MaxThreads)
	}
	var err error
	if o.cacheBytes, err = restoreCacheSize(o.cacheSize); err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	snap, m, ar, err := a.resolveArchiveIn(s, o.ns, ref, archive)
	if err != nil {
		return err
	}
	unlock, err := a.holdSnapshot(s, snap)
	if err != nil {
		return err
	}
	defer unlock()
	switch ar.Kind {
	case store.ArchiveSplitPxar, store.ArchiveSinglePxar:
		return a.restoreTree(o, s, snap, m, ar, target)
	case store.ArchiveImage, store.ArchiveOther, store.ArchiveBlob:
	default:
		return fmt.Errorf("snapshot %s: archive %s: restore takes images, file archives and blobs", snap, ar.Name)
	}
	if o.path != "" || len(o.include) > 0 || len(o.exclude) > 0 {
		return usageErr("--path, --include and --exclude are for file archives; %s is not one", ar.Name)
	}
	if ar.Kind == store.ArchiveBlob {
		return a.restoreBlob(o, s, snap, m, ar, target)
	}
	x, err := s.OpenSnapshotIndex(snap, m, ar.Files[0])
	if err != nil {
		return err
	}
	defer x.Close()
	t, closeTarget, err := restore.OpenTarget(target, a.stdout, o.force, !o.noSync)
	if err != nil {
		return err
	}
	stats := new(restore.Stats)
	start := time.Now()
	prog := a.startProgress("restore "+ar.Name, x.Size(), func() (int64, string) {
		return stats.Bytes.Load(), "zeroes " + humanize.IBytes(uint64(stats.ZeroBytes.Load()))
	})
	rep, err := restore.Image(a.ctx, x, s, t, restore.Options{Threads: o.threads, IgnoreErrors: o.ignoreErrors,
		Discard: o.discard, Stats: stats})
	prog.Stop()
	// --ignore-errors: damaged ranges were written as zeros and the
	// restore finished, with errors (exit 3).
	finished := err == nil || (o.ignoreErrors && errors.Is(err, restore.ErrDamaged))
	if cerr := closeTarget(finished); cerr != nil {
		if err == nil || finished {
			err, finished = cerr, false
		}
	}
	if a.ctx.Err() != nil && !finished {
		a.imageInterrupted(o, restore.ImageSummary{Snapshot: snap.String(), Archive: ar.Name, Target: target,
			Bytes: stats.Bytes.Load(), ZeroBytes: stats.ZeroBytes.Load(), Seconds: time.Since(start).Seconds()}, t, x.Size())
		return a.ctx.Err()
	}
	el := time.Since(start)
	if rep != nil {
		a.printRestore(o, restore.ImageSummary{Snapshot: snap.String(), Archive: ar.Name, Target: target, Bytes: rep.Bytes,
			ZeroBytes: rep.ZeroBytes, Seconds: el.Seconds(), MBps: progress.MBps(rep.Bytes, el), Damaged: rep.Damaged}, err == nil)
	}
	if err != nil && finished {
		return &codeError{code: exitPartial, err: err}
	}
	return err
}

// holdSnapshot locks snap shared while it is read, as every reader does:
// forget and prune refuse it until the restore ends. A snapshot removed
// since it was resolved is reported gone.
func (a *app) holdSnapshot(s *store.Store, snap store.Snapshot) (func(), error) {
	l, err := s.LockSnapshot(a.ctx, snap, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("snapshot %s was removed (forgotten or pruned) before it could be read: %w", snap, err)
	}
	if err != nil {
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

func (a *app) printRestore(o restoreOpts, s restore.ImageSummary, ok bool) {
	out := a.stdout
	if s.Target == "-" {
		out = a.stderr // stdout carries the data
	}
	if o.json {
		if s.Damaged == nil {
			s.Damaged = []restore.Damage{}
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		enc.Encode(s)
		return
	}
	s.WriteText(out, ok && !a.quiet) // -q: what was damaged only
}
