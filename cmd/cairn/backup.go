package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

type backupOpts struct {
	typ, id, ns string
	json        bool
	chunkSize   string
	workers     int
	at          string
	noSync      bool
	pxar        pxarOpts
}

// backupSpec is one NAME.ext:PATH argument.
type backupSpec struct{ name, path string }

func (s backupSpec) isPxar() bool { return strings.HasSuffix(s.name, ".pxar") }

func parseSpecs(args []string) ([]backupSpec, error) {
	var out []backupSpec
	for _, a := range args {
		name, path, ok := strings.Cut(a, ":")
		if !ok || name == "" || path == "" {
			return nil, usageErr("archive %q: want NAME.img:PATH or NAME.pxar:DIR", a)
		}
		if !strings.HasSuffix(name, ".img") && !strings.HasSuffix(name, ".pxar") {
			return nil, usageErr("archive %q: want NAME.img:PATH (an image) or NAME.pxar:DIR (a directory tree)", a)
		}
		for _, o := range out {
			if o.name == name {
				return nil, usageErr("archive %s given twice", name)
			}
		}
		out = append(out, backupSpec{name, path})
	}
	return out, nil
}

// backupSummary is what `cairn backup` reports.
type backupSummary struct {
	Snapshot   string  `json:"snapshot"`
	Bytes      int64   `json:"bytes"`
	ZeroBytes  int64   `json:"zero_bytes"`
	NewBytes   int64   `json:"new_bytes"`
	NewStored  int64   `json:"new_stored_bytes"`
	NewChunks  int64   `json:"new_chunks"`
	Chunks     int64   `json:"chunks"`
	DedupRatio float64 `json:"dedup_ratio"`
	Seconds    float64 `json:"seconds"`
	MBps       float64 `json:"mb_per_s"`
	// File archives (NAME.pxar), totals and one entry each.
	Files       int64         `json:"files,omitempty"`
	Dirs        int64         `json:"dirs,omitempty"`
	ReusedBytes int64         `json:"reused_bytes,omitempty"`
	Errors      int64         `json:"errors"`
	FileArchive []pxarSummary `json:"file_archives,omitempty"`
}

func (a *app) backupCmd() *cobra.Command {
	var o backupOpts
	cmd := &cobra.Command{
		Use:   "backup --type vm|ct|host --id ID [--ns NS] NAME.img:PATH … NAME.pxar:DIR …",
		Short: "back up images, raw files, block devices and directory trees into a new snapshot",
		Long: `Back up images (NAME.img:PATH: a file or block device, fixed-size chunks) and
directory trees (NAME.pxar:DIR: a pxar archive) into one new snapshot.

Directory trees are walked in one pass; symlinks are never followed, other
file systems are left empty unless --all-file-systems, entries matching
--exclude patterns or .pxarexclude files are left out. Files that vanish or
cannot be read are reported on stderr; the backup goes on and exits 3.

--change-detection-mode (as in PBS): legacy writes a single-stream archive;
data reads every file into a split archive (NAME.mpxar.didx +
NAME.ppxar.didx); metadata (the default when the group's previous snapshot
has the archive) does not read files whose size, mtime, ctime, inode, mode
and owner are unchanged but references their data in the previous snapshot.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.backup(o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "host", "backup type: vm, ct or host")
	f.StringVar(&o.id, "id", "", "backup id (group name), e.g. the VM number or host name")
	f.StringVar(&o.ns, "ns", "", "namespace, e.g. prod/db")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	f.StringVar(&o.chunkSize, "chunk-size", "4M", "fixed chunk size of images, average chunk size of file archives (power of two, 64K to 16M)")
	f.IntVar(&o.workers, "workers", 0, "hash/compress workers (default: number of CPUs)")
	f.StringVar(&o.at, "time", "", "snapshot time (RFC 3339; default now): newer than the group's newest snapshot, at most a day ahead")
	f.BoolVar(&o.noSync, "no-sync", false, "do not syncfs the store before writing the manifest")
	o.pxar.flags(f)
	a.lockWaitFlag(cmd)
	cmd.MarkFlagRequired("id")
	return cmd
}

func (a *app) backup(o backupOpts, args []string) error {
	specs, err := parseSpecs(args)
	if err != nil {
		return err
	}
	cs, err := parseSize(o.chunkSize)
	if err != nil {
		return usageErr("--chunk-size: %v", err)
	}
	if err := chunk.CheckChunkSize(int(cs)); err != nil {
		return usageErr("--chunk-size: %v", err)
	}
	mode, err := filearchive.ParseMode(o.pxar.mode)
	if err != nil {
		return usageErr("--change-detection-mode: %v", err)
	}
	var at time.Time
	if o.at != "" {
		if at, err = time.Parse(time.RFC3339, o.at); err != nil {
			return usageErr("--time: %v", err)
		}
	}
	g := store.Group{NS: store.NS(o.ns), Type: o.typ, ID: o.id}
	if err := g.Check(); err != nil {
		return usageErr("--type/--id/--ns: %v", err)
	}
	files := make([]*os.File, len(specs))
	var total int64
	for i, sp := range specs {
		if sp.isPxar() {
			if err := checkDir(sp.path); err != nil {
				return fmt.Errorf("archive %s: %w", sp.name, err)
			}
			continue
		}
		f, err := os.Open(sp.path)
		if err != nil {
			return fmt.Errorf("archive %s: %w", sp.name, err)
		}
		defer f.Close()
		files[i] = f
		total += sourceSize(f)
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	// A signal wakes a read blocked on a pipe or FIFO that sends nothing.
	defer context.AfterFunc(a.ctx, func() {
		for _, f := range files {
			if f != nil {
				f.SetReadDeadline(time.Now())
			}
		}
	})()
	b, err := s.StartBackup(a.ctx, g, at)
	if errors.Is(err, store.ErrBadTime) && o.at != "" {
		return usageErr("--time: %v", err)
	}
	if err != nil {
		return err
	}
	if o.noSync {
		b.Sync = store.SyncNone
	}
	start := time.Now()
	imgStats, pxarStats := new(store.UploadStats), new(store.UploadStats)
	var pxarDone atomic.Int64
	prog := a.startProgress("backup "+b.Snapshot().String(), total, func() (int64, string) {
		return imgStats.Bytes.Load() + pxarDone.Load(), ""
	})
	var sums []pxarSummary
	for i, sp := range specs {
		if sp.isPxar() {
			var ps pxarSummary
			ps, err = a.backupPxar(b, sp, filearchive.Options{Mode: mode, Exclude: o.pxar.exclude,
				AllFileSystems: o.pxar.allFS, ChunkSize: int(cs), Workers: o.workers, Stats: pxarStats, Progress: &pxarDone})
			sums = append(sums, ps)
		} else {
			err = b.AddImage(a.ctx, sp.name, files[i], store.ImageOptions{ChunkSize: int(cs), Workers: o.workers, Stats: imgStats})
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		err = b.Finish()
	} else {
		b.Abort()
	}
	prog.Stop()
	if err != nil && a.ctx.Err() != nil {
		err = context.Cause(a.ctx) // the read the signal woke failed with a deadline
	}
	if err != nil {
		return fmt.Errorf("backup %s failed, nothing kept: %w", b.Snapshot(), err)
	}
	sum := newBackupSummary(b.Snapshot(), imgStats.Snapshot(), pxarStats.Snapshot(), sums, time.Since(start))
	if err := a.printBackupSummary(o, sum); err != nil {
		return err
	}
	if sum.Errors > 0 {
		return &codeError{code: exitPartial, err: fmt.Errorf("backup %s finished, but %d entries could not be read (see above)",
			b.Snapshot(), sum.Errors)}
	}
	return nil
}

func checkDir(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errors.New(path + " is not a directory")
	}
	return nil
}

// sourceSize is the size of a file or block device, 0 when unknown.
func sourceSize(f *os.File) int64 {
	if n, err := f.Seek(0, 2); err == nil {
		f.Seek(0, 0)
		return n
	}
	return 0
}

// newBackupSummary totals the uploads of images (img) and file archives
// (px); MB/s counts image bytes and file contents, reused ones included.
func newBackupSummary(snap store.Snapshot, img, px store.UploadTotals, pxars []pxarSummary, el time.Duration) backupSummary {
	t := img
	t.Add(px)
	sum := backupSummary{Snapshot: snap.String(), Bytes: t.Bytes, ZeroBytes: t.ZeroBytes, NewBytes: t.NewBytes,
		NewStored: t.NewStored, NewChunks: t.NewChunks, Chunks: t.Chunks, Seconds: el.Seconds(), FileArchive: pxars}
	content := img.Bytes
	for _, p := range pxars {
		sum.Files += p.Files
		sum.Dirs += p.Dirs
		sum.ReusedBytes += p.ReusedBytes
		sum.Errors += p.Errors
		content += p.Bytes
	}
	sum.MBps = mbps(content, el)
	if t.NewStored > 0 {
		sum.DedupRatio = float64(t.Bytes) / float64(t.NewStored)
	}
	return sum
}

func (a *app) printBackupSummary(o backupOpts, sum backupSummary) error {
	if o.json {
		return printJSON(a, sum)
	}
	ratio := "∞ (nothing new)"
	if sum.DedupRatio > 0 {
		ratio = fmt.Sprintf("%.2fx", sum.DedupRatio)
	}
	el := time.Duration(sum.Seconds * float64(time.Second))
	fmt.Fprintf(a.stdout, "snapshot %s\n  size      %s (%s zero)\n  new       %s in %d of %d chunks (%s stored)\n  dedup     %s\n",
		sum.Snapshot, humanize.IBytes(uint64(sum.Bytes)), humanize.IBytes(uint64(sum.ZeroBytes)),
		humanize.IBytes(uint64(sum.NewBytes)), sum.NewChunks, sum.Chunks, humanize.IBytes(uint64(sum.NewStored)), ratio)
	for _, p := range sum.FileArchive {
		p.print(a.stdout)
	}
	fmt.Fprintf(a.stdout, "  time      %s, %.1f MB/s\n", el.Round(time.Millisecond), sum.MBps)
	return nil
}
