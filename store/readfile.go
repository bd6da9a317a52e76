package store

import (
	"fmt"
	"io"
	"os"

	"github.com/cairnfs/cairn/store/internal/fsutil"
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

// OpenRegular opens path for reading and returns it with its stat if it
// is a regular file (fsutil.OpenRegular: what is not one is an error
// wrapping fsutil.ErrNotRegular, naming path and what it is; a missing
// file's error wraps fs.ErrNotExist).
func OpenRegular(path string) (*os.File, os.FileInfo, error) { return fsutil.OpenRegular(path) }

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
