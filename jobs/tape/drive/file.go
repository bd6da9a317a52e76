package drive

import (
	"fmt"
	"os"

	"github.com/cairnfs/cairn/jobs/tape/block"
	"github.com/cairnfs/cairn/store"
)

// leomZone is the early-warning zone at the end of a tape: a writer whose
// block ends inside it is told LEOM. It leaves room for at least one more
// block (the end-of-stream block) after the warning.
func leomZone(capacity int64) int64 {
	return max(2*block.Size, capacity/32/block.Size*block.Size)
}

// FileWriter writes one tape file: it is a block.Writer whose blocks go
// to the tape file. Finish ends the file; Close without Finish leaves the
// file without an end-of-stream block (as an aborted write does on a real
// tape).
type FileWriter struct {
	*block.Writer
	dev *fileDevice
}

type fileDevice struct {
	d        *Drive
	f        *os.File
	label    string
	n        int
	used     int64 // bytes on the tape including this file so far
	capacity int64
}

var _ block.Device = (*fileDevice)(nil)

func (fd *fileDevice) WriteBlock(b []byte) (bool, error) {
	if fd.f == nil {
		return false, fmt.Errorf("tape %s file %d: write after close", fd.label, fd.n)
	}
	if fd.used+int64(len(b)) > fd.capacity {
		return false, fmt.Errorf("tape %s file %d: %w", fd.label, fd.n, block.ErrEndOfMedia)
	}
	if _, err := fd.f.Write(b); err != nil {
		return false, fmt.Errorf("tape %s file %d: %w", fd.label, fd.n, err)
	}
	fd.used += int64(len(b))
	return fd.used > fd.capacity-leomZone(fd.capacity), nil
}

// WriteFilemark makes the file durable and closes it.
func (fd *fileDevice) WriteFilemark() error {
	if fd.f == nil {
		return fmt.Errorf("tape %s file %d: file mark after close", fd.label, fd.n)
	}
	err := fd.f.Sync()
	if cerr := fd.close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tape %s file %d: %w", fd.label, fd.n, err)
	}
	return nil
}

func (fd *fileDevice) close() error {
	if fd.f == nil {
		return nil
	}
	err := fd.f.Close()
	fd.f = nil
	if fd.d.writing != nil && fd.d.writing.dev == fd {
		fd.d.writing = nil
	}
	return err
}

// Label returns the tape's label.
func (w *FileWriter) Label() string { return w.dev.label }

// FileNumber returns the number of the file being written.
func (w *FileWriter) FileNumber() int { return w.dev.n }

// Close closes the file; without a prior Finish the file has no end
// marker and reads back as truncated.
func (w *FileWriter) Close() error { return w.dev.close() }

// WriteFile starts a new file at the current position; files from there
// on are removed first. The position moves past the new file.
func (d *Drive) WriteFile() (*FileWriter, error) {
	if d.writing != nil {
		return nil, ErrWriting
	}
	st, idx, err := d.current()
	if err != nil {
		return nil, err
	}
	label, pos := st.CurrentTape.Name, st.CurrentTape.Pos
	if err := d.truncate(label, idx, pos); err != nil {
		return nil, err
	}
	used, err := d.usedBytes(label, pos)
	if err != nil {
		return nil, err
	}
	idx.Files = pos + 1
	f, err := os.OpenFile(d.filePath(label, pos), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("tape %s file %d: %w", label, pos, err)
	}
	if err := d.storeIndex(label, idx); err != nil {
		f.Close()
		return nil, err
	}
	st.CurrentTape.Pos = idx.Files
	if err := d.storeStatus(st); err != nil {
		f.Close()
		return nil, err
	}
	dev := &fileDevice{d: d, f: f, label: label, n: pos, used: used, capacity: idx.capacity()}
	w := &FileWriter{Writer: block.NewWriter(dev), dev: dev}
	d.writing = w
	return w, nil
}

// FileReader reads one tape file: a block.Reader over it.
type FileReader struct {
	*block.Reader
	f     *os.File
	label string
	n     int
}

// Label returns the tape's label.
func (r *FileReader) Label() string { return r.label }

// FileNumber returns the file's number on the tape.
func (r *FileReader) FileNumber() int { return r.n }

// Close closes the file.
func (r *FileReader) Close() error { return r.f.Close() }

// ReadFile opens the file at the current position for reading and moves
// the position past it. At the end of the recorded data it returns
// ErrEndOfData; a file without blocks returns block.ErrEmptyFile (the
// position still moves past it).
func (d *Drive) ReadFile() (*FileReader, error) {
	if d.writing != nil {
		return nil, ErrWriting
	}
	st, idx, err := d.current()
	if err != nil {
		return nil, err
	}
	label, pos := st.CurrentTape.Name, st.CurrentTape.Pos
	if pos >= idx.Files {
		return nil, fmt.Errorf("tape %s file %d: %w", label, pos, ErrEndOfData)
	}
	// a tape file that is a FIFO or a device is refused, never waited on
	f, _, err := store.OpenRegular(d.filePath(label, pos))
	if err != nil {
		return nil, fmt.Errorf("tape %s file %d: %w", label, pos, err)
	}
	st.CurrentTape.Pos = pos + 1
	if err := d.storeStatus(st); err != nil {
		f.Close()
		return nil, err
	}
	r, err := block.NewReader(block.StreamSource(f), fmt.Sprintf("tape %s file %d", label, pos))
	if err != nil {
		f.Close()
		return nil, err
	}
	return &FileReader{Reader: r, f: f, label: label, n: pos}, nil
}
