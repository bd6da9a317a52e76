package store

import (
	"os"
	"strings"
	"time"
)

// snapIndexTemp is the infix of the index's temporary files
// (SnapIndexName + snapIndexTemp + digits, os.CreateTemp's).
const snapIndexTemp = ".tmp-"

// snapIndexTempAge is how old a temporary file of the index must be to
// be a crashed writer's: a live writer writes and renames it within
// milliseconds (a variable for tests).
var snapIndexTempAge = 10 * time.Minute

// sweepSnapIndexTemps removes the index's temporary files in root last
// changed before cutoff: regular files of the index's own name pattern
// only, never following a symlink (lstat; unlink removes a name, never
// what a symlink points to). Errors are ignored: the sweep is tidying.
func sweepSnapIndexTemps(root string, cutoff time.Time) {
	d, err := os.Open(root)
	if err != nil {
		return
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return
	}
	for _, n := range names {
		if !isSnapIndexTemp(n) {
			continue
		}
		p := root + string(os.PathSeparator) + n
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || !fi.ModTime().Before(cutoff) {
			continue
		}
		os.Remove(p)
	}
}

// isSnapIndexTemp: name is SnapIndexName + snapIndexTemp + digits.
func isSnapIndexTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, SnapIndexName+snapIndexTemp)
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}
