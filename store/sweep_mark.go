package store

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// What garbage collection's mark needs of the local directory beside
// TouchChunk: the index files of a snapshot directory, finished or not,
// the copies of a missing chunk to keep, and the atime self-test.

// ErrNoAtime is the error of a store whose file system does not record
// an explicit atime update: garbage collection cannot tell used chunks
// from garbage on it.
var ErrNoAtime = errors.New("file system does not record explicit atime updates")

// SnapshotIndexFiles lists the index files (.fidx, .didx) of a snapshot
// directory, finished or not, by listing the directory (an unfinished
// snapshot has no manifest to name them), sorted. Hidden names (a
// writer's temporary files) are left out. A snapshot that is gone is an
// error wrapping ErrNotFound.
func (s *Store) SnapshotIndexFiles(snap Snapshot) ([]string, error) {
	names, err := fsutil.ReadNames(s.SnapshotPath(snap))
	if err != nil {
		return nil, fmt.Errorf("list snapshot %s: %w", snap, notFound(err))
	}
	out := names[:0]
	for _, n := range names {
		if _, ok := index.Kind(n); ok && !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// MarkChunk is garbage collection's touch of chunk d: its atime set to
// now, mtime left, as TouchChunk, but never through a symbolic link (a
// hostile store's link would have GC touch a file elsewhere; the sweep
// never removes a link either). A missing chunk's error wraps
// ErrNotFound and fs.ErrNotExist.
func (s *Store) MarkChunk(d chunk.Digest) error {
	path := s.ChunkPath(d)
	if err := fsutil.TouchNoFollow(path); err != nil {
		return fmt.Errorf("touch %s: %w", path, notFound(err))
	}
	return nil
}

// TouchMissing refreshes the atime of the copies a missing chunk d may
// still have: its .bad copies (as PBS does, so they stay while an index
// references the chunk and go once nothing does or a good copy is back)
// and the hidden name a killed sweep may have left it under. It reports
// whether any was found.
func (s *Store) TouchMissing(d chunk.Digest) (bool, error) {
	dir := filepath.Dir(s.ChunkPath(d))
	name := d.String()
	found := false
	try := func(n string) error {
		err := fsutil.TouchNoFollow(dir + "/" + n)
		if err == nil {
			found = true
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("touch %s/%s: %w", dir, n, err)
		}
		return nil
	}
	if err := try(AsideName(name)); err != nil {
		return found, err
	}
	for i := 0; i <= 9; i++ {
		bad := fmt.Sprintf("%s.%d.bad", name, i)
		if err := try(bad); err != nil {
			return found, err
		}
		if err := try(AsideName(bad)); err != nil {
			return found, err
		}
	}
	return found, nil
}

// atimeCheckName is the file CheckAtime works on, in the chunk
// directory but outside the prefix directories (no sweep sees it).
const atimeCheckName = ".gc-atime-check"

// CheckAtime checks that the file system of the chunk directory records
// an explicit atime update, as PBS's check_fs_atime_updates does: it sets
// a test file's atime two days back, reads it back, touches the atime
// only (as garbage collection's mark does) and reads it back again. It
// returns the touched atime: now, in the file system's clock. A file
// system that ignores either update is an error wrapping ErrNoAtime.
func (s *Store) CheckAtime() (time.Time, error) {
	return s.checkAtime(func(dirfd int, name string) error {
		ts := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_OMIT}}
		return unix.UtimesNanoAt(dirfd, name, ts, unix.AT_SYMLINK_NOFOLLOW)
	})
}

func (s *Store) checkAtime(touch func(dirfd int, name string) error) (time.Time, error) {
	dir := filepath.Join(s.root, chunkDir)
	path := filepath.Join(dir, atimeCheckName)
	dirfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return time.Time{}, fmt.Errorf("atime check: open %s: %w", dir, err)
	}
	defer unix.Close(dirfd)
	fd, err := unix.Openat(dirfd, atimeCheckName, unix.O_CREAT|unix.O_RDWR|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return time.Time{}, fmt.Errorf("atime check: open %s: %w", path, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return time.Time{}, fmt.Errorf("atime check: %s: not a regular file (%v)", path, err)
	}
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	ts := []unix.Timespec{unix.NsecToTimespec(old.UnixNano()), unix.NsecToTimespec(old.UnixNano())}
	if err := unix.UtimesNanoAt(dirfd, atimeCheckName, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return time.Time{}, fmt.Errorf("atime check: set the times of %s: %w", path, err)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return time.Time{}, fmt.Errorf("atime check: %s: %w", path, err)
	}
	if got := time.Unix(st.Atim.Sec, st.Atim.Nsec); got.Sub(old).Abs() > time.Hour {
		return time.Time{}, fmt.Errorf("atime check: %s: %w: its atime was set to %s but reads %s",
			path, ErrNoAtime, old.UTC().Format(time.RFC3339), got.UTC().Format(time.RFC3339))
	}
	if err := touch(dirfd, atimeCheckName); err != nil {
		return time.Time{}, fmt.Errorf("atime check: touch %s: %w", path, err)
	}
	if err := unix.Fstat(fd, &st); err != nil {
		return time.Time{}, fmt.Errorf("atime check: %s: %w", path, err)
	}
	got := time.Unix(st.Atim.Sec, st.Atim.Nsec)
	if got.Sub(old) < 24*time.Hour {
		return time.Time{}, fmt.Errorf("atime check: %s: %w: touching its atime (utimensat, atime only) left it at %s (is the store on a file system or mount that ignores atime updates?)",
			path, ErrNoAtime, got.UTC().Format(time.RFC3339Nano))
	}
	return got, nil
}
