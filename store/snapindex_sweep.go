package store

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// snapIndexTemp is the infix of the index's temporary files
// (SnapIndexName + snapIndexTemp + digits, os.CreateTemp's).
const snapIndexTemp = ".tmp-"

// snapIndexTempAge is how old a temporary file of the index must be to
// be a crashed writer's: a live writer writes and renames it within
// milliseconds (a variable for tests).
var snapIndexTempAge = 10 * time.Minute

// sweepSnapIndexTemps removes the index's temporary files in root last
// changed before cutoff: regular files of the index's own name pattern,
// owned by this user (os.CreateTemp made them), never following a
// symlink (lstat; unlink removes a name, never what a symlink points
// to, and never a directory). Errors are ignored: the sweep is tidying.
func sweepSnapIndexTemps(root string, cutoff time.Time) {
	names, err := fsutil.ReadNames(root)
	if err != nil {
		return
	}
	euid := uint32(os.Geteuid())
	for _, n := range names {
		if !isSnapIndexTemp(n) {
			continue
		}
		p := filepath.Join(root, n)
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Uid != euid ||
			!time.Unix(0, st.Mtim.Nano()).Before(cutoff) {
			continue
		}
		_ = unix.Unlink(p) // a name only, never a directory
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
