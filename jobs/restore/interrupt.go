package restore

import (
	"fmt"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// IncompleteMarker is the file an interrupted tree restore leaves in its
// target directory, saying where it stopped. A later restore into the
// directory (with --overwrite) removes it first; one that is interrupted
// again writes it anew.
const IncompleteMarker = ".cairn-restore-incomplete"

// clearMarker removes the marker of an earlier interrupted restore from
// the target directory: a regular file of that name only.
func clearMarker(rootFD int) {
	var st unix.Stat_t
	if unix.Fstatat(rootFD, IncompleteMarker, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
		unix.Unlinkat(rootFD, IncompleteMarker, 0)
	}
}

// madeSingle records the file a single-entry restore made, open at fd.
func (t *treeRestore) madeSingle(fd int) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		t.single.dev, t.single.ino, t.single.made = st.Dev, st.Ino, true
	}
}

// interrupted records where an interrupted restore of start (as name in
// the target's parent for a single entry) stopped. A directory gets the
// marker, created anew (O_EXCL, never through a symbolic link) after
// removing a file of that name the restore may have made; a single file
// the restore made is removed again, checked by device and inode.
func (t *treeRestore) interrupted(start *pxar.Entry, name string) {
	rep := t.report
	if t.atDir != nil {
		rep.StoppedAt = t.atDir.path(t.atName)
	} else {
		rep.StoppedAt = t.root.path("")
	}
	if !start.IsDir() {
		var st unix.Stat_t
		if t.single.made && unix.Fstatat(t.rootFD, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil &&
			st.Dev == t.single.dev && st.Ino == t.single.ino {
			rep.Removed = unix.Unlinkat(t.rootFD, name, 0) == nil
		}
		return
	}
	clearMarker(t.rootFD)
	fd, err := unix.Openat(t.rootFD, IncompleteMarker, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	msg := fmt.Sprintf("This restore was interrupted and is incomplete.\n"+
		"It stopped at %s after %d files, %d directories, %d other entries, %d bytes.\n"+
		"Restore again with --overwrite to complete it.\n", rep.StoppedAt, rep.Files, rep.Dirs, rep.Others, rep.Bytes)
	if _, err := unix.Write(fd, []byte(msg)); err == nil {
		rep.Marker = t.root.path(IncompleteMarker)
	}
}
