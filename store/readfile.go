package store

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// ReadFileBounded reads a whole regular file of at most limit bytes, as
// os.ReadFile does, but never hangs or allocates for a hostile store: it
// opens with O_NONBLOCK (a FIFO would block the open until a writer
// comes), refuses what is not a regular file, and refuses a file larger
// than limit before allocating for it. Errors name the path; a missing
// file's error wraps fs.ErrNotExist.
func ReadFileBounded(path string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%s)", path, fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d it may have", path, fi.Size(), limit)
	}
	// Read one byte past the size seen: a file that grew is refused too.
	b := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, b)
	switch {
	case err == nil:
		return nil, fmt.Errorf("%s: grew past %d bytes while read", path, fi.Size())
	case err != io.ErrUnexpectedEOF && err != io.EOF:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b[:n], nil
}
