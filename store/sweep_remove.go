package store

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// RemoveResult is what a conditional removal did.
type RemoveResult uint8

// Results of PrefixDir.RemoveIfOlder and RecoverAside.
const (
	// Removed: the file was still older than the cutoff and is gone.
	Removed RemoveResult = iota + 1
	// KeptTouched: someone touched the file since it was listed; it is
	// back under its name.
	KeptTouched
	// KeptReplaced: the file was touched and meanwhile a new copy took
	// its name; that copy stays and the renamed one was dropped.
	KeptReplaced
	// Gone: the file had vanished before it could be renamed aside.
	Gone
	// Busy: the hidden name is taken by a leftover of a killed sweep,
	// which is dealt with as an entry of its own; the file stays.
	Busy
)

// RemoveIfOlder removes a chunk or .bad file e of the directory when its
// atime is older than cutoff, closing the race with a writer in another
// process that touches the file between the sweep's stat and its
// unlink: the file is first renamed to a hidden name (AsideName) no
// writer looks up, so a touch from then on finds nothing (and the
// writer stores the chunk again or fails); the renamed file's atime is
// read again, and only a file still older than the cutoff is unlinked.
// One that was touched in between is put back with RENAME_NOREPLACE;
// when a writer has meanwhile stored a new copy under the name, the
// renamed one is dropped. size is the removed file's size.
func (d *PrefixDir) RemoveIfOlder(e ChunkEntry, cutoff time.Time) (res RemoveResult, size int64, err error) {
	if e.Kind != EntryChunk && e.Kind != EntryBad {
		return 0, 0, fmt.Errorf("remove %s/%s: %w: not a chunk or .bad copy", d.path, e.Name, ErrBadName)
	}
	aside := AsideName(e.Name)
	switch err := d.renameNoReplace(e.Name, aside); {
	case errors.Is(err, unix.ENOENT):
		return Gone, 0, nil
	case errors.Is(err, unix.EEXIST):
		return Busy, 0, nil
	case err != nil:
		return 0, 0, fmt.Errorf("rename %s/%s aside: %w", d.path, e.Name, err)
	}
	if d.afterAside != nil {
		d.afterAside(e.Name)
	}
	now, ok, err := d.stat(aside)
	if err != nil || !ok {
		// not ours to judge any more: put back what can be
		return d.putBack(aside, e.Name, err)
	}
	if !now.Atime.Before(cutoff) {
		return d.putBack(aside, e.Name, nil)
	}
	if err := unix.Unlinkat(d.fd, aside, 0); err != nil {
		return d.putBack(aside, e.Name, fmt.Errorf("remove %s/%s: %w", d.path, aside, err))
	}
	return Removed, now.Size, nil
}

// RecoverAside deals with a file a killed sweep left under its hidden
// name (EntryAside): still older than cutoff it is removed (nothing can
// have touched it under that name but this GC's mark, which touches the
// hidden name of a referenced chunk it finds missing), otherwise it is
// put back under its name, or dropped when a new copy holds the name.
func (d *PrefixDir) RecoverAside(e ChunkEntry, cutoff time.Time) (res RemoveResult, size int64, err error) {
	if e.Kind != EntryAside {
		return 0, 0, fmt.Errorf("recover %s/%s: %w: not a hidden sweep leftover", d.path, e.Name, ErrBadName)
	}
	if !e.Atime.Before(cutoff) {
		return d.putBack(e.Name, e.Target(), nil)
	}
	if err := unix.Unlinkat(d.fd, e.Name, 0); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return Gone, 0, nil
		}
		return 0, 0, fmt.Errorf("remove %s/%s: %w", d.path, e.Name, err)
	}
	return Removed, e.Size, nil
}

// RemoveTemp removes a temporary file e whose writer is dead: one last
// changed before cutoff (a running writer's files are newer than its
// start, which the cutoff precedes). It reports false when the file had
// changed since it was listed or had vanished.
func (d *PrefixDir) RemoveTemp(e ChunkEntry, cutoff time.Time) (bool, error) {
	if e.Kind != EntryTemp {
		return false, fmt.Errorf("remove %s/%s: %w: not a temporary file", d.path, e.Name, ErrBadName)
	}
	now, ok, err := d.stat(e.Name)
	if err != nil || !ok || !now.Changed.Before(cutoff) {
		return false, err
	}
	if err := unix.Unlinkat(d.fd, e.Name, 0); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("remove %s/%s: %w", d.path, e.Name, err)
	}
	return true, nil
}

// putBack renames aside back to name unless name exists again, in which
// case the aside copy is dropped (a writer stored the chunk anew). cause
// is returned with the outcome.
func (d *PrefixDir) putBack(aside, name string, cause error) (RemoveResult, int64, error) {
	err := d.renameNoReplace(aside, name)
	switch {
	case err == nil:
		return KeptTouched, 0, cause
	case errors.Is(err, unix.EEXIST):
		if err := unix.Unlinkat(d.fd, aside, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			return KeptReplaced, 0, errors.Join(cause, fmt.Errorf("drop %s/%s: %w", d.path, aside, err))
		}
		return KeptReplaced, 0, cause
	case errors.Is(err, unix.ENOENT):
		return Gone, 0, cause
	}
	return 0, 0, errors.Join(cause, fmt.Errorf("put %s/%s back as %s: %w", d.path, aside, name, err))
}

// renameNoReplace renames old to new in the directory, failing with
// EEXIST when new exists. Where the file system lacks RENAME_NOREPLACE
// a hard link and an unlink do the same (the link fails on an existing
// name, and a touch between the two reaches the one inode).
func (d *PrefixDir) renameNoReplace(old, new string) error {
	err := unix.Renameat2(d.fd, old, d.fd, new, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	if err := unix.Linkat(d.fd, old, d.fd, new, 0); err != nil {
		return err
	}
	return unix.Unlinkat(d.fd, old, 0)
}
