package drive

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// checkDir reports whether dir is an existing directory, with an error
// that says how to make a new drive when it is not.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("tape drive %s: %w (create the directory to make a new virtual drive)", dir, ErrNoDrive)
	case err != nil:
		return fmt.Errorf("tape drive %s: %w", dir, err)
	case !fi.IsDir():
		return fmt.Errorf("tape drive %s: %w: not a directory", dir, ErrNoDrive)
	}
	return nil
}

// Inspect lists the tapes of the drive directory without taking its
// lock, so that status can be shown while another process writes. The
// drive replaces its state files atomically, so each tape's entry is
// consistent; Used may trail a file being written.
func Inspect(dir string) ([]TapeInfo, error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	return (&Drive{dir: dir}).Tapes()
}
