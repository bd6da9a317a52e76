package store

import (
	"errors"
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
	f, fi, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, &errTooLarge{path, fi.Size(), limit}
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

// errNotRegular is what OpenRegular refuses.
var errNotRegular = errors.New("not a regular file")

// OpenRegular opens path for reading and returns it with its stat if it
// is a regular file. O_NONBLOCK keeps a FIFO from blocking the open until
// a writer comes (it changes nothing for a regular file). A missing
// file's error wraps fs.ErrNotExist; what is not a regular file is an
// error wrapping errNotRegular, naming path and what it is.
func OpenRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s: %w (%s)", path, errNotRegular, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// maxManifest bounds a manifest's decoded JSON; its blob file may be a
// little larger (a blob header on an incompressible payload).
const (
	maxManifest     = 16 << 20
	MaxManifestBlob = maxManifest + 4096
)

// errTooLarge is the error of ReadFileBounded for a file over its limit.
type errTooLarge struct {
	path        string
	size, limit int64
}

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("%s: %d bytes, more than the %d a file of its kind may have", e.path, e.size, e.limit)
}
