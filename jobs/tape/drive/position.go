package drive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Load puts a tape into the drive, positioned at its start.
func (d *Drive) Load(label string) error {
	if d.writing != nil {
		return ErrWriting
	}
	if _, err := d.loadIndex(label); err != nil {
		return err
	}
	return d.storeStatus(driveStatus{CurrentTape: &tapeStatus{Name: label}})
}

// Unload ejects the tape.
func (d *Drive) Unload() error {
	if d.writing != nil {
		return ErrWriting
	}
	return d.storeStatus(driveStatus{})
}

// Loaded returns the label of the loaded tape, or ErrEmpty.
func (d *Drive) Loaded() (string, error) {
	st, err := d.loadStatus()
	if err != nil {
		return "", err
	}
	if st.CurrentTape == nil {
		return "", ErrEmpty
	}
	return st.CurrentTape.Name, nil
}

// Position returns the loaded tape's file position.
func (d *Drive) Position() (int, error) {
	st, _, err := d.current()
	if err != nil {
		return 0, err
	}
	return st.CurrentTape.Pos, nil
}

// FileCount returns the number of files on the loaded tape.
func (d *Drive) FileCount() (int, error) {
	_, idx, err := d.current()
	return idx.Files, err
}

// MoveToFile positions the loaded tape before file n (n may equal the
// file count: the end of recorded data).
func (d *Drive) MoveToFile(n int) error {
	if d.writing != nil {
		return ErrWriting
	}
	st, idx, err := d.current()
	if err != nil {
		return err
	}
	if n < 0 || n > idx.Files {
		return fmt.Errorf("tape %s: move to file %d: %w (%d files)", st.CurrentTape.Name, n, ErrPosition, idx.Files)
	}
	st.CurrentTape.Pos = n
	return d.storeStatus(st)
}

// Rewind positions the loaded tape at its start.
func (d *Drive) Rewind() error { return d.MoveToFile(0) }

// MoveToEOM positions the loaded tape after its last file.
func (d *Drive) MoveToEOM() error {
	n, err := d.FileCount()
	if err != nil {
		return err
	}
	return d.MoveToFile(n)
}

// Format erases the loaded tape (all files) and rewinds it.
func (d *Drive) Format() error {
	if d.writing != nil {
		return ErrWriting
	}
	st, idx, err := d.current()
	if err != nil {
		return err
	}
	if err := d.truncate(st.CurrentTape.Name, idx, 0); err != nil {
		return err
	}
	st.CurrentTape.Pos = 0
	return d.storeStatus(st)
}

// truncate removes files n and later.
func (d *Drive) truncate(label string, idx tapeIndex, n int) error {
	if idx.Files <= n {
		return nil
	}
	for i := idx.Files - 1; i >= n; i-- {
		if err := os.Remove(d.filePath(label, i)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("tape %s file %d: %w", label, i, err)
		}
	}
	idx.Files = n
	return d.storeIndex(label, idx)
}

// Remaining returns the bytes left on the loaded tape after the current
// position.
func (d *Drive) Remaining() (int64, error) {
	st, idx, err := d.current()
	if err != nil {
		return 0, err
	}
	used, err := d.usedBytes(st.CurrentTape.Name, st.CurrentTape.Pos)
	if err != nil {
		return 0, err
	}
	return max(idx.capacity()-used, 0), nil
}
