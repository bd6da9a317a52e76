package s3store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/internal/printable"
	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sys/unix"
)

// The snapshot files of a remote store's bucket are hostile input: a key
// names a file of the local mirror only when it is exactly a snapshot
// file's path as a local store lays it out, and an object is read only
// up to what a file of its kind may hold. The mirror is written through
// directory descriptors opened without following symlinks, so nothing is
// written outside the store's directory.

// maxMarker bounds a protection marker object (PBS's is empty).
const maxMarker = 4096

// maxMirrorInMemory bounds a snapshot file moved through memory whole
// (objstore's Get and Put); larger index files are refused until the
// transfer streams.
const maxMirrorInMemory = 256 << 20

// fileLimit is the most a snapshot file called name may hold.
func fileLimit(name string) int64 {
	switch {
	case name == store.ManifestName:
		return store.MaxManifestBlob
	case name == store.ProtectedName:
		return maxMarker
	case strings.HasSuffix(name, ".fidx"), strings.HasSuffix(name, ".didx"):
		return min(index.MaxFileSize, maxMirrorInMemory)
	}
	return chunk.MaxBlobSize
}

// KeyError is a bucket key a refresh refused (it mirrors the others).
type KeyError struct {
	Key    string
	Reason string
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("bucket key %q refused: %s", printable.String(e.Key, 300), e.Reason)
}

// mirrorNameRE is what an index or blob a refresh mirrors is called (as
// PBS names archives).
var mirrorNameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._+\-]*\.(fidx|didx|blob)$`)

// parseSnapshotKey reads a key of the bucket's snapshot area as the
// snapshot and the file name it stands for: exactly
// [ns/NAME/…]TYPE/ID/TIME/FILE with valid names, and a FILE that a
// snapshot directory holds (an index or blob, the manifest, the marker).
func parseSnapshotKey(key string) (store.Snapshot, string, error) {
	bad := func(why string) (store.Snapshot, string, error) {
		return store.Snapshot{}, "", &KeyError{Key: key, Reason: why}
	}
	parts := strings.Split(key, "/")
	if len(parts) > 2*store.MaxNSDepth+4 {
		return bad("too deep for a snapshot file")
	}
	var ns []string
	i := 0
	for i+1 < len(parts) && parts[i] == "ns" {
		ns = append(ns, parts[i+1])
		i += 2
	}
	rest := parts[i:]
	if len(rest) != 4 {
		return bad("not [ns/NAME/…]TYPE/ID/TIME/FILE")
	}
	g := store.Group{NS: store.NS(strings.Join(ns, "/")), Type: rest[0], ID: rest[1]}
	if err := g.Check(); err != nil {
		return bad(err.Error())
	}
	t, err := store.ParseTime(rest[2])
	if err != nil {
		return bad(err.Error())
	}
	name := rest[3]
	if name != store.ManifestName && name != store.ProtectedName && !mirrorNameRE.MatchString(name) {
		return bad("not a snapshot file name (an index or blob: " + mirrorNameRE.String() + ")")
	}
	snap := store.Snapshot{Group: g, Time: t}
	if store.SnapshotFile(snap, name) != key {
		return bad("not in canonical form")
	}
	return snap, name, nil
}

// mirrorMarker is the hidden file a refresh puts into a snapshot
// directory it makes: a directory with it is the mirror's, not a local
// backup's, and the refresh may remove it when unfinished and gone from
// the bucket.
const mirrorMarker = ".mirrored"

// openSnapshotDirAt opens (making what is missing) the snapshot's
// directory under root, one component at a time and never through a
// symlink. A snapshot directory it makes gets the mirrorMarker.
func (s *rstore) openSnapshotDirAt(snap store.Snapshot) (int, error) {
	fd, err := unix.Open(s.root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%s: %w", s.root, err)
	}
	rel := strings.TrimSuffix(store.SnapshotFile(snap, ""), "/")
	path := s.root
	made := false
	for _, c := range strings.Split(rel, "/") {
		path = filepath.Join(path, c)
		next, err := openDirAt(fd, c)
		if errors.Is(err, unix.ENOENT) {
			err = unix.Mkdirat(fd, c, 0o755)
			made = err == nil
			if err == nil || errors.Is(err, unix.EEXIST) {
				next, err = openDirAt(fd, c)
			}
		}
		unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, fmt.Errorf("%s: not a directory (a symlink or a file): %w", path, store.ErrBadName)
		}
		if err != nil {
			return -1, fmt.Errorf("%s: %w", path, err)
		}
		fd = next
	}
	if made {
		if m, err := unix.Openat(fd, mirrorMarker, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644); err == nil {
			unix.Close(m)
		}
	}
	return fd, nil
}

func openDirAt(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// mirrorUpToDate reports whether the directory's file name is the object
// obj describes (same size and modification time); a local entry that is
// not a regular file is an error.
func mirrorUpToDate(dirfd int, dir, name string, obj objstore.ObjectInfo) (ok, exists bool, err error) {
	var st unix.Stat_t
	err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false, true, fmt.Errorf("%s: not a regular file (mode %#o): not replaced by the bucket's %s",
			filepath.Join(dir, name), st.Mode, obj.Key)
	}
	mt := time.Unix(st.Mtim.Unix())
	return st.Size == obj.Size && sameMirrorTime(mt, obj.LastModified), true, nil
}

// sameMirrorTime compares a file's time with an object's to the
// millisecond (what listings give).
func sameMirrorTime(a, b time.Time) bool {
	return a.Truncate(time.Millisecond).Equal(b.Truncate(time.Millisecond))
}

// download writes the object at key into the directory as name: a
// temporary file, synced, renamed into place, given the object's time.
// The time is the listing's (obj), not the download's: an object
// replaced between the two is then downloaded again by the next refresh.
// buf is reused between calls.
func (r *remote) download(ctx context.Context, dirfd int, dir, name string, obj objstore.ObjectInfo, buf []byte) ([]byte, error) {
	key := obj.Key
	data, _, err := r.bucket.Get(ctx, key, fileLimit(name), buf)
	if errors.Is(err, objstore.ErrTooLarge) {
		return buf, &KeyError{Key: key, Reason: fmt.Sprintf("larger than the %d bytes a file %s may have", fileLimit(name), name)}
	}
	if err != nil {
		return buf, fmt.Errorf("download %s: %w", key, err)
	}
	buf = data[:0]
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := "." + name + ".tmp_" + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(dirfd, tmp, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return buf, fmt.Errorf("%s: %w", filepath.Join(dir, tmp), err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return buf, fmt.Errorf("write %s: %w", filepath.Join(dir, name), err)
	}
	if !obj.LastModified.IsZero() {
		ts := []unix.Timespec{unix.NsecToTimespec(time.Now().UnixNano()), unix.NsecToTimespec(obj.LastModified.UnixNano())}
		unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
	}
	return buf, nil
}

// putLocalFile uploads the regular file at path (at most limit bytes).
func putLocalFile(ctx context.Context, b objstore.Objects, key, path string, limit int64) (objstore.ObjectInfo, error) {
	data, err := store.ReadFileBounded(path, limit)
	if err != nil {
		return objstore.ObjectInfo{}, err
	}
	return b.Put(ctx, key, objstore.Cond{}, data)
}

// touchDir sets a directory's times to now; failing, it logs.
func (s *rstore) touchDir(path string) {
	now := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, now, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		s.remote.bucket.Logger().Warn("a group of the mirror may be listed as before its manifest changed", "dir", path, "err", err)
	}
}
