package s3store

import (
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
)

// A remote store whose bucket cannot be reached when it is opened opens
// offline: what reads the local mirror of the snapshot files (listings,
// the mount's tree, reads of chunks in the on-disk cache) works, with a
// warning that says how old the mirror is; every request to the bucket
// fails at once (objstore does not retry an endpoint it never reached).

// refreshedName is the file whose mtime is the last complete refresh of
// the mirror from the bucket.
const refreshedName = ".cairn-refreshed"

// MirrorRefreshed is when the mirror was last refreshed from the bucket
// completely (zero: never, or a local store).
func (s *rstore) MirrorRefreshed() time.Time {
	if s.remote == nil {
		return time.Time{}
	}
	fi, err := os.Lstat(filepath.Join(s.root, refreshedName))
	if err != nil || !fi.Mode().IsRegular() {
		return time.Time{}
	}
	return fi.ModTime()
}

// noteRefreshed records a complete refresh (best effort: a store
// directory the user cannot write only loses the age in the warning).
func (s *rstore) noteRefreshed() {
	now := time.Now()
	name := filepath.Join(s.root, refreshedName)
	if err := os.Chtimes(name, now, now); err != nil {
		fsutil.WriteFileAtomic(name, nil) //nolint:errcheck // best effort
	}
}

func (s *rstore) warnOffline(err error) {
	age := "never refreshed"
	if t := s.MirrorRefreshed(); !t.IsZero() {
		age = "as of " + t.Local().Format(time.DateTime) + " (" + time.Since(t).Round(time.Second).String() + " ago)"
	}
	s.remote.bucket.Logger().Warn("bucket unreachable: working from the local mirror of its snapshots, "+age, "store", s.root, "err", err)
}
