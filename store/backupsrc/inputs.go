package backupsrc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/backupsum"
	"github.com/dustin/go-humanize"
)

// Inputs are the opened sources of a backup's images and blobs
// (file archives are walked by path): a file, a block device, or
// standard input for the one spec whose PATH is "-".
type Inputs struct {
	specs []Spec
	srcs  []io.Reader // nil for file archives
	files []*os.File  // to close
	stop  func() bool // stops closing them when ctx ends
	total int64       // bytes to read, 0 when unknown (a stream)
	// blobs backed up, and their bytes (decoded): the summary counts
	// them, the progress display the bytes as they come
	blobs     int64
	blobBytes atomic.Int64
}

// Open opens the sources before the backup starts, so a missing file or
// a blob too large fails before anything is written. A blob's size is
// checked here from its file's size; a stream's as it is read. stdin is
// what PATH "-" reads. When ctx ends, an open that waits (a FIFO no
// writer has opened) returns ctx's error, and the files opened are
// closed, which ends a read waiting on a pipe.
func Open(ctx context.Context, specs []Spec, stdin io.Reader) (*Inputs, error) {
	in := &Inputs{specs: specs, srcs: make([]io.Reader, len(specs))}
	known := true
	for i, sp := range specs {
		switch {
		case sp.IsPxar():
			if err := checkDir(sp.Path); err != nil {
				in.Close()
				return nil, fmt.Errorf("archive %s: %w", sp.Name, err)
			}
			continue
		case sp.IsStdin():
			in.srcs[i], known = stdin, false
			continue
		}
		f, err := openSource(ctx, sp.Path)
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("archive %s: %w", sp.Name, err)
		}
		in.files = append(in.files, f)
		in.srcs[i] = f
		n := sourceSize(f)
		if sp.IsBlob() {
			if err := checkBlobSource(sp, f, n); err != nil {
				in.Close()
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
	in.stop = context.AfterFunc(ctx, in.closeFiles)
	return in, nil
}

// Close closes the files opened.
func (in *Inputs) Close() {
	if in.stop != nil {
		in.stop()
	}
	in.closeFiles()
}

func (in *Inputs) closeFiles() {
	for _, f := range in.files {
		f.Close()
	}
}

// openSource opens path for reading; an open that waits (a FIFO without
// a writer) ends when ctx does: the FIFO is opened for writing and
// closed at once, which lets the waiting open return, and the file it
// gives is closed.
func openSource(ctx context.Context, path string) (*os.File, error) {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode()&os.ModeNamedPipe != 0 {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	go func() {
		if o := <-ch; o.f != nil {
			o.f.Close()
		}
	}()
	return nil, fmt.Errorf("opening %s: %w", path, context.Cause(ctx))
}

// checkBlobSource refuses what cannot be a blob before reading it.
func checkBlobSource(sp Spec, f *os.File, size int64) error {
	fi, err := f.Stat()
	switch {
	case err != nil:
		return fmt.Errorf("archive %s: %w", sp.Name, err)
	case fi.IsDir():
		return fmt.Errorf("archive %s: %s is a directory: a blob holds one small file (use NAME.pxar:DIR for a tree)", sp.Name, sp.Path)
	case size > store.MaxBlobData:
		return blobTooLarge(sp, fmt.Sprintf("%s (%d bytes)", humanize.IBytes(uint64(size)), size))
	}
	return nil
}

func blobTooLarge(sp Spec, size string) error {
	return fmt.Errorf("archive %s: %s is %s, %w: back it up as NAME.img:PATH instead",
		sp.Name, sourceLabel(sp), size, store.ErrBlobTooLarge)
}

func sourceLabel(sp Spec) string {
	if sp.IsStdin() {
		return "standard input"
	}
	return sp.Path
}

// Add backs up spec i, an image or a blob, into b.
func (in *Inputs) Add(ctx context.Context, b *store.Backup, i int, opt store.ImageOptions) error {
	sp := in.specs[i]
	if sp.IsBlob() {
		data, err := readBlobSource(sp, in.srcs[i])
		if err != nil {
			return err
		}
		if err := b.AddBlobData(sp.Name, data); err != nil {
			return err
		}
		in.blobs++
		in.blobBytes.Add(int64(len(data)))
		return nil
	}
	if !sp.IsStdin() {
		return b.AddImage(ctx, sp.Name, in.srcs[i], opt)
	}
	cr := &countReader{r: in.srcs[i]}
	if err := b.AddImage(ctx, sp.Name, cr, opt); err != nil {
		return err
	}
	if cr.n == 0 {
		return fmt.Errorf("archive %s: standard input was empty: nothing to back up", sp.Name)
	}
	return nil
}

// readBlobSource reads a blob's data, never more than one byte over the
// limit (a file may have grown since it was checked; a stream is not
// known up front).
func readBlobSource(sp Spec, r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, store.MaxBlobData+1))
	if err != nil {
		return nil, fmt.Errorf("archive %s: read %s: %w", sp.Name, sourceLabel(sp), err)
	}
	if len(data) > store.MaxBlobData {
		return nil, blobTooLarge(sp, "larger")
	}
	return data, nil
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

// Images lists the images of specs with their references (refs:
// store.Backup.References).
func Images(specs []Spec, refs map[string]store.Snapshot) []backupsum.Image {
	var out []backupsum.Image
	for _, sp := range specs {
		if sp.IsPxar() || sp.IsBlob() {
			continue
		}
		im := backupsum.Image{Archive: sp.Name}
		if r, ok := refs[sp.Name]; ok {
			im.Previous = r.String()
		}
		out = append(out, im)
	}
	return out
}

// checkDir refuses a tree's PATH that is not a directory.
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

// Interrupt wakes a read blocked on a pipe or FIFO that sends nothing
// (standard input too, when it can be polled).
func (in *Inputs) Interrupt() {
	for _, src := range in.srcs {
		if f, ok := src.(*os.File); ok {
			f.SetReadDeadline(time.Now())
		}
	}
}

// Total is the bytes of the images and blobs to read, 0 when unknown (a
// stream).
func (in *Inputs) Total() int64 { return in.total }

// Blobs are the blobs backed up so far and their bytes.
func (in *Inputs) Blobs() (n, bytes int64) { return in.blobs, in.blobBytes.Load() }
