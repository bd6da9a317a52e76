package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/backupsrc"
	"github.com/cairnfs/cairn/store/backupsum"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/pxar/walk/pathlist"
	"github.com/dustin/go-humanize"
)

// Options are what one backup is of and how it is made.
type Options struct {
	Group  store.Group
	Time   time.Time // the snapshot's time; zero: now
	DryRun bool      // read, chunk and look up everything, write nothing
	NoSync bool      // no syncfs of the store before the manifest
	Specs  []backupsrc.Spec
	// ImageChunkSize is the fixed chunk size of images (0: the store's
	// default, store.ImageChunkSize).
	ImageChunkSize int
	// Tree is how file archives are made: Mode, Exclude, AllFileSystems,
	// ChunkSize, Workers and Logger are taken from it (Workers is the
	// images' too); the engine fills in the rest.
	Tree filearchive.Options
	// Select restricts the one file archive to the listed paths (nil:
	// all of it); the paths not met are warned of on Warn.
	Select *pathlist.Selection
	// Encrypt, if set, makes the backup encrypted before any archive is
	// added (store.Backup.Encrypt and the wrapped key's blob).
	Encrypt func(*store.Backup) error
	// Key is the backup job's key file (keyfile=, password-file=),
	// loaded at each run to set Encrypt; the command line sets Encrypt
	// itself.
	Key KeySource
	// OnError hears of the entries of a file archive that vanished or
	// could not be read (the backup goes on); nil: Warn gets a line.
	OnError func(archive, path string, err error)
	// Warn gets the warnings of Select and, without OnError, of entries;
	// nil: io.Discard.
	Warn io.Writer
	// Progress, if set, is shown while the backup runs: it is called
	// once the snapshot is known and returns the function that stops it.
	Progress func(label string, p *backupsrc.Progress) (stop func())
}

// Run makes one snapshot of opt.Specs in s, read from in (backupsrc.Open
// of the same specs), and returns its summary. An error from starting
// the backup is returned as it is (store.ErrBadTime, a lock); any later
// one leaves nothing kept and says so. A summary with Errors > 0 is a
// snapshot kept without the entries that could not be read.
func Run(ctx context.Context, s *store.Store, in *backupsrc.Inputs, opt Options) (backupsum.Summary, error) {
	// A cancel wakes a read blocked on a pipe or FIFO that sends nothing.
	defer context.AfterFunc(ctx, in.Interrupt)()
	b, err := startBackup(ctx, s, opt)
	if err != nil {
		return backupsum.Summary{}, err
	}
	if opt.Encrypt != nil {
		if err := opt.Encrypt(b); err != nil {
			b.Abort()
			return backupsum.Summary{}, fmt.Errorf("backup %s failed, nothing kept: %w", b.Snapshot(), err)
		}
	}
	start := time.Now()
	imgStats, pxarStats := new(store.UploadStats), new(store.UploadStats)
	bp := backupsrc.NewProgress(opt.Specs, in, imgStats)
	stop := func() {}
	if opt.Progress != nil {
		stop = opt.Progress("backup "+b.Snapshot().String(), bp)
	}
	sums, err := addAll(ctx, b, in, bp, opt, imgStats, pxarStats)
	if err == nil {
		bp.At(len(opt.Specs))
		t := imgStats.Snapshot()
		t.Add(pxarStats.Snapshot())
		b.SetChunkUploadStats(store.ChunkUploadStatsOf(t))
		err = b.Finish()
	} else {
		b.Abort()
	}
	stop()
	if err != nil && ctx.Err() != nil {
		err = context.Cause(ctx) // the read the cancel woke failed with a deadline
	}
	if err != nil {
		return backupsum.Summary{}, fmt.Errorf("backup %s failed, nothing kept: %w%s", b.Snapshot(), err,
			diskFullAdvice(err, imgStats.NewStored.Load()+pxarStats.NewStored.Load()))
	}
	sum := backupsum.New(b.Snapshot(), imgStats.Snapshot(), pxarStats.Snapshot(), sums, time.Since(start))
	sum.Blobs, sum.BlobBytes = in.Blobs()
	sum.ReadBytes += sum.BlobBytes
	sum.Images = backupsrc.Images(opt.Specs, b.References())
	sum.DryRun = b.Dry()
	return sum, nil
}

// startBackup starts the backup, or its dry run (store.StartDryRun).
func startBackup(ctx context.Context, s *store.Store, opt Options) (*store.Backup, error) {
	start := s.StartBackup
	if opt.DryRun {
		start = s.StartDryRun
	}
	b, err := start(ctx, opt.Group, opt.Time)
	if err != nil {
		return nil, err
	}
	if opt.NoSync {
		b.Sync = store.SyncNone
	}
	return b, nil
}

// addAll adds every source to b in order, stopping at the first error.
func addAll(ctx context.Context, b *store.Backup, in *backupsrc.Inputs, bp *backupsrc.Progress, opt Options,
	imgStats, pxarStats *store.UploadStats) ([]backupsum.FileArchive, error) {
	var sums []backupsum.FileArchive
	for i, sp := range opt.Specs {
		bp.At(i)
		if !sp.IsPxar() {
			err := in.Add(ctx, b, i, store.ImageOptions{ChunkSize: opt.ImageChunkSize, Workers: opt.Tree.Workers, Stats: imgStats})
			if err != nil {
				return sums, err
			}
			continue
		}
		ps, err := addTree(ctx, b, sp, bp.Tree(i), pxarStats, opt)
		sums = append(sums, ps)
		if err != nil {
			return sums, err
		}
	}
	return sums, nil
}

// addTree adds file archive sp.Name from directory sp.Path to b.
func addTree(ctx context.Context, b *store.Backup, sp backupsrc.Spec, p *filearchive.Progress, stats *store.UploadStats, opt Options) (backupsum.FileArchive, error) {
	warn := opt.Warn
	if warn == nil {
		warn = io.Discard
	}
	fo := filearchive.Options{Mode: opt.Tree.Mode, Exclude: opt.Tree.Exclude, AllFileSystems: opt.Tree.AllFileSystems,
		ChunkSize: opt.Tree.ChunkSize, Workers: opt.Tree.Workers, Logger: opt.Tree.Logger, Stats: stats, Progress: p}
	fo.OnError = func(path string, err error) {
		if opt.OnError != nil {
			opt.OnError(sp.Name, path, err)
			return
		}
		fmt.Fprintf(warn, "cairn: warning: %s: %s: %v\n", sp.Name, termsafe.Quote(filepath.Join(sp.Path, path)), err)
	}
	if opt.Select != nil {
		fo.Select = opt.Select.Select
	}
	res, err := filearchive.AddArchive(ctx, b, sp.Name, sp.Path, fo)
	if opt.Select != nil && err == nil {
		res.Errors += opt.Select.Warn(warn, sp.Name)
	}
	w := res.Walk
	return backupsum.FileArchive{Archive: sp.Name, Mode: res.Mode.String(), Previous: res.Previous,
		Files: int64(w.Files), Dirs: int64(w.Dirs), Symlinks: int64(w.Symlinks), Hardlinks: int64(w.Hardlinks),
		Others: int64(w.Specials), Excluded: int64(w.Excluded), Bytes: int64(w.Bytes),
		ReadFiles: res.ReadFiles, ReadBytes: res.ReadBytes, ReusedFiles: res.ReusedFiles, ReusedBytes: res.ReusedBytes,
		PaddingBytes: res.PaddingBytes, RetiredChunks: res.RetiredChunks, RetiredBytes: res.RetiredBytes, MetaSize: res.MetaSize, PayloadSize: res.PayloadSize, Errors: res.Errors}, err
}

// diskFullAdvice is what a backup that filled the store's file system
// adds to its error: the chunks it wrote stay (a GC keeps chunks newer
// than its cutoff, for backups that may still reference them) until a GC
// is told otherwise.
func diskFullAdvice(err error, written int64) string {
	if !errors.Is(err, syscall.ENOSPC) {
		return ""
	}
	return fmt.Sprintf("\nthe store's file system is full; the %s of chunks this backup wrote stay until a GC's cutoff passes them: "+
		"to free them now, when no backup runs: cairn gc --atime-cutoff 0", humanize.IBytes(uint64(written)))
}

// Verb is what the summary calls the snapshot b made: "backup", or
// "dry run of".
func Verb(sum backupsum.Summary) string {
	if sum.DryRun {
		return "dry run of"
	}
	return "backup"
}
