package store

import (
	"fmt"
	"io"
	"os"
)

// maxManifest bounds a manifest's decoded JSON; its blob file may be a
// little larger (a blob header on an incompressible payload).
const (
	maxManifest     = 16 << 20
	maxManifestBlob = maxManifest + 4096
)

// errTooLarge is the error of readFileLimit for a file over its limit.
type errTooLarge struct {
	path        string
	size, limit int64
}

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("%s: %d bytes, more than the %d a file of its kind may have", e.path, e.size, e.limit)
}

// readFileLimit reads a whole file of at most limit bytes. A larger file
// (or one that grows past the limit while read) fails before its content
// is read, with an error naming it; the open error is returned as is.
func readFileLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > limit {
		return nil, &errTooLarge{path, fi.Size(), limit}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, &errTooLarge{path, int64(len(b)), limit}
	}
	return b, nil
}
