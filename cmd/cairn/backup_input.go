package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/backupsum"
	"github.com/dustin/go-humanize"
)

// backupInputs are the opened sources of a backup's images and blobs
// (file archives are walked by path): a file, a block device, or
// standard input for the one spec whose PATH is "-".
type backupInputs struct {
	specs []backupSpec
	srcs  []io.Reader // nil for file archives
	files []*os.File  // to close
	total int64       // bytes to read, 0 when unknown (a stream)
	// blobs backed up, and their bytes (decoded): the summary counts
	// them, the progress display the bytes as they come
	blobs     int64
	blobBytes atomic.Int64
}

// openInputs opens the sources before the backup starts, so a missing
// file or a blob too large fails before anything is written. A blob's
// size is checked here from its file's size; a stream's as it is read.
func (a *app) openInputs(specs []backupSpec) (*backupInputs, error) {
	in := &backupInputs{specs: specs, srcs: make([]io.Reader, len(specs))}
	known := true
	for i, sp := range specs {
		switch {
		case sp.isPxar():
			if err := checkDir(sp.path); err != nil {
				in.close()
				return nil, fmt.Errorf("archive %s: %w", sp.name, err)
			}
			continue
		case sp.isStdin():
			in.srcs[i], known = a.stdin, false
			continue
		}
		f, err := os.Open(sp.path)
		if err != nil {
			in.close()
			return nil, fmt.Errorf("archive %s: %w", sp.name, err)
		}
		in.files = append(in.files, f)
		in.srcs[i] = f
		n := sourceSize(f)
		if sp.isBlob() {
			if err := checkBlobSource(sp, f, n); err != nil {
				in.close()
				return nil, err
			}
			continue
		}
		in.total += n
		known = known && n > 0
	}
	if !known {
		in.total = 0 // a stream: the progress shows bytes and rate only
	}
	return in, nil
}

func (in *backupInputs) close() {
	for _, f := range in.files {
		f.Close()
	}
}

// checkBlobSource refuses what cannot be a blob before reading it.
func checkBlobSource(sp backupSpec, f *os.File, size int64) error {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fmt.Errorf("archive %s: %w", sp.name, err)
	case fi.IsDir():
		return fmt.Errorf("archive %s: %s is a directory: a blob holds one small file (use NAME.pxar:DIR for a tree)", sp.name, sp.path)
	case size > store.MaxBlobData:
		return blobTooLarge(sp, fmt.Sprintf("%s (%d bytes)", humanize.IBytes(uint64(size)), size))
	}
	return nil
}

func blobTooLarge(sp backupSpec, size string) error {
	return fmt.Errorf("archive %s: %s is %s, %w: back it up as NAME.img:PATH instead",
		sp.name, sourceLabel(sp), size, store.ErrBlobTooLarge)
}

func sourceLabel(sp backupSpec) string {
	if sp.isStdin() {
		return "standard input"
	}
	return sp.path
}

// add backs up spec i, an image or a blob, into b.
func (in *backupInputs) add(ctx context.Context, b *store.Backup, i int, opt store.ImageOptions) error {
	sp := in.specs[i]
	if sp.isBlob() {
		data, err := readBlobSource(sp, in.srcs[i])
		if err != nil {
			return err
		}
		if err := b.AddBlobData(sp.name, data); err != nil {
			return err
		}
		in.blobs++
		in.blobBytes.Add(int64(len(data)))
		return nil
	}
	if !sp.isStdin() {
		return b.AddImage(ctx, sp.name, in.srcs[i], opt)
	}
	cr := &countReader{r: in.srcs[i]}
	if err := b.AddImage(ctx, sp.name, cr, opt); err != nil {
		return err
	}
	if cr.n == 0 {
		return fmt.Errorf("archive %s: standard input was empty: nothing to back up", sp.name)
	}
	return nil
}

// readBlobSource reads a blob's data, never more than one byte over the
// limit (a file may have grown since it was checked; a stream is not
// known up front).
func readBlobSource(sp backupSpec, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, store.MaxBlobData+1))
	if err != nil {
		return nil, fmt.Errorf("archive %s: read %s: %w", sp.name, sourceLabel(sp), err)
	}
	if len(data) > store.MaxBlobData {
		return nil, blobTooLarge(sp, "larger")
	}
	return data, nil
}

// checkSpecName refuses archive names the store would refuse only once
// the backup has begun, and the names of the snapshot's own blobs: the
// manifest and PBS's client log (which tape export adds beside the
// manifest's files).
func checkSpecName(name string) error {
	switch {
	case strings.ContainsAny(name, "/\x00") || strings.HasPrefix(name, "."):
		return usageErr("archive name %q: want a plain file name (no \"/\", not starting with \".\")", name)
	case name == store.ManifestName:
		return usageErr("archive name %q is reserved for the snapshot's manifest", name)
	case name == "client.log.blob":
		return usageErr("archive name %q is reserved for PBS's client log", name)
	}
	return nil
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// sourceSize is the size of a file or block device, 0 when unknown.
func sourceSize(f *os.File) int64 {
	if n, err := f.Seek(0, io.SeekEnd); err == nil {
		f.Seek(0, io.SeekStart)
		return n
	}
	return 0
}

// imageSummaries lists the images of specs with their references (refs:
// store.Backup.References).
func imageSummaries(specs []backupSpec, refs map[string]store.Snapshot) []backupsum.Image {
	var out []backupsum.Image
	for _, sp := range specs {
		if sp.isPxar() || sp.isBlob() {
			continue
		}
		im := backupsum.Image{Archive: sp.name}
		if r, ok := refs[sp.name]; ok {
			im.Previous = r.String()
		}
		out = append(out, im)
	}
	return out
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

// backupID is --id, or for --type host without it the host's name up to
// its first dot (proxmox-backup-client's default), which must be a valid
// backup id.
func backupID(o backupOpts) (string, error) {
	if o.id != "" {
		return o.id, nil
	}
	if o.typ != store.TypeHost {
		return "", usageErr("--id is required with --type %s", quoteName(o.typ))
	}
	name, err := os.Hostname()
	if err != nil {
		return "", usageErr("--id not given and the host name is unknown (%v): give --id", err)
	}
	name, _, _ = strings.Cut(name, ".")
	if err := (store.Group{Type: store.TypeHost, ID: name}).Check(); err != nil {
		return "", usageErr("--id not given and the host name %q is not a valid backup id ([A-Za-z0-9_][A-Za-z0-9._-]*): give --id", name)
	}
	return name, nil
}

// startBackup starts the backup, or its dry run (store.StartDryRun).
func startBackup(ctx context.Context, s *store.Store, g store.Group, at time.Time, dry bool) (*store.Backup, error) {
	if dry {
		return s.StartDryRun(ctx, g, at)
	}
	return s.StartBackup(ctx, g, at)
}

func backupKind(b *store.Backup) string {
	if b.Dry() {
		return "dry run of"
	}
	return "backup"
}
