package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
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
}

// backupSpec is one NAME.ext:PATH argument.
type backupSpec struct{ name, path string }

func parseSpecs(args []string) ([]backupSpec, error) {
	var out []backupSpec
	for _, a := range args {
		name, path, ok := strings.Cut(a, ":")
		if !ok || name == "" || path == "" {
			return nil, usageErr("archive %q: want NAME.img:PATH", a)
		}
		if !strings.HasSuffix(name, ".img") {
			return nil, usageErr("archive %q: only NAME.img:PATH archives are supported", a)
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
}

func (a *app) backupCmd() *cobra.Command {
	var o backupOpts
	cmd := &cobra.Command{
		Use:   "backup --type vm|ct|host --id ID [--ns NS] NAME.img:PATH …",
		Short: "back up images, raw files or block devices into a new snapshot",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.backup(o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "host", "backup type: vm, ct or host")
	f.StringVar(&o.id, "id", "", "backup id (group name), e.g. the VM number or host name")
	f.StringVar(&o.ns, "ns", "", "namespace, e.g. prod/db")
	f.BoolVar(&o.json, "json", false, "print the summary as JSON")
	f.StringVar(&o.chunkSize, "chunk-size", "4M", "fixed chunk size of images (power of two, 64K to 16M)")
	f.IntVar(&o.workers, "workers", 0, "hash/compress workers (default: number of CPUs)")
	f.StringVar(&o.at, "time", "", "snapshot time (RFC 3339; default now)")
	f.BoolVar(&o.noSync, "no-sync", false, "do not syncfs the store before writing the manifest")
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
	var at time.Time
	if o.at != "" {
		if at, err = time.Parse(time.RFC3339, o.at); err != nil {
			return usageErr("--time: %v", err)
		}
	}
	files := make([]*os.File, len(specs))
	var total int64
	for i, sp := range specs {
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
	g := store.Group{NS: store.NS(o.ns), Type: o.typ, ID: o.id}
	b, err := s.StartBackup(a.ctx, g, at)
	if err != nil {
		return err
	}
	if o.noSync {
		b.Sync = store.SyncNone
	}
	start := time.Now()
	stats := new(store.UploadStats)
	prog := startProgress(a.stderr, "backup "+b.Snapshot().String(), total, func() (int64, string) {
		return stats.Bytes.Load(), ""
	})
	for i, sp := range specs {
		err = b.AddImage(a.ctx, sp.name, files[i], store.ImageOptions{ChunkSize: int(cs), Workers: o.workers, Stats: stats})
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
	if err != nil {
		return fmt.Errorf("backup %s failed, nothing kept: %w", b.Snapshot(), err)
	}
	return a.printBackupSummary(o, b.Snapshot(), stats.Snapshot(), time.Since(start))
}

// sourceSize is the size of a file or block device, 0 when unknown.
func sourceSize(f *os.File) int64 {
	if n, err := f.Seek(0, 2); err == nil {
		f.Seek(0, 0)
		return n
	}
	return 0
}

func (a *app) printBackupSummary(o backupOpts, snap store.Snapshot, t store.UploadTotals, el time.Duration) error {
	sum := backupSummary{Snapshot: snap.String(), Bytes: t.Bytes, ZeroBytes: t.ZeroBytes, NewBytes: t.NewBytes,
		NewStored: t.NewStored, NewChunks: t.NewChunks, Chunks: t.Chunks, Seconds: el.Seconds(), MBps: mbps(t.Bytes, el)}
	if t.NewStored > 0 {
		sum.DedupRatio = float64(t.Bytes) / float64(t.NewStored)
	}
	if o.json {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	ratio := "∞ (nothing new)"
	if sum.DedupRatio > 0 {
		ratio = fmt.Sprintf("%.2fx", sum.DedupRatio)
	}
	fmt.Fprintf(a.stdout, "snapshot %s\n  size      %s (%s zero)\n  new       %s in %d of %d chunks (%s stored)\n  dedup     %s\n  time      %s, %.1f MB/s\n",
		sum.Snapshot, humanize.IBytes(uint64(t.Bytes)), humanize.IBytes(uint64(t.ZeroBytes)),
		humanize.IBytes(uint64(t.NewBytes)), t.NewChunks, t.Chunks, humanize.IBytes(uint64(t.NewStored)),
		ratio, el.Round(time.Millisecond), sum.MBps)
	return nil
}
