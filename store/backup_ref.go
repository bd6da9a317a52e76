package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// Each archive of a backup has its own reference (base): the group's
// newest finished snapshot before this one that has an archive of that
// name, whose last verification did not fail, and whose chunks are named
// as this backup's are (encrypted with the same key, or plain like this
// one, as PBS requires). An image takes the known-chunk set and chunk
// size from it, a file archive its change detection and known chunks, as
// restic picks a parent per path: a snapshot that holds only a blob, or
// only another archive, or that another key made, is passed over.
//
// A reference is picked when an archive first asks for it
// (Backup.Reference), held locked shared until the backup ends (a local
// forget refuses it), and, on a remote store, named in the writer's
// lease beside every other reference of the backup before its manifest
// is checked still there (rule 3, docs/design/store.md): the lease names every
// snapshot whose chunks the writer takes as present.

// Reference returns the reference of archive name (as the user names it:
// disk.img, root.pxar) for this backup, picking it on the first call; ok
// is false when the group has none. The error is a lease update that
// failed (remote store).
func (b *Backup) Reference(ctx context.Context, name string) (Snapshot, bool, error) {
	b.refMu.Lock()
	defer b.refMu.Unlock()
	if r, ok := b.refs[name]; ok {
		return r.snap, r.ok, nil
	}
	if b.ended {
		return Snapshot{}, false, nil
	}
	r, err := b.pickReference(ctx, name)
	if err != nil {
		return Snapshot{}, false, err
	}
	if b.refs == nil {
		b.refs = make(map[string]reference)
	}
	b.refs[name] = r
	if r.ok {
		b.s.log.Debug("backup: reference picked", "snapshot", b.snap, "archive", name, "reference", r.snap)
	}
	return r.snap, r.ok, nil
}

// References returns the references picked so far, by archive name
// (archives without one are left out).
func (b *Backup) References() map[string]Snapshot {
	b.refMu.Lock()
	defer b.refMu.Unlock()
	out := make(map[string]Snapshot, len(b.refs))
	for name, r := range b.refs {
		if r.ok {
			out[name] = r.snap
		}
	}
	return out
}

// Bases returns every snapshot the backup holds as a reference of one of
// its archives (what a remote store's writer lease names), oldest first
// as picked.
func (b *Backup) Bases() []Snapshot {
	b.refMu.Lock()
	defer b.refMu.Unlock()
	return slices.Clone(b.bases)
}

type reference struct {
	snap Snapshot
	ok   bool
}

// pickReference walks the group's snapshots from the newest back for
// archive name's reference. One that cannot be locked (being removed),
// or whose manifest left the bucket once named in the lease, is passed
// over too.
func (b *Backup) pickReference(ctx context.Context, name string) (reference, error) {
	snaps, err := b.s.Snapshots(b.snap.Group)
	if b.dry && errors.Is(err, fs.ErrNotExist) {
		return reference{}, nil // a new group, which a dry run does not make
	}
	if err != nil {
		b.s.log.Warn("backup: cannot list the group for a reference", "snapshot", b.snap, "archive", name, "err", err)
		return reference{}, nil
	}
	for i := len(snaps) - 1; i >= 0; i-- {
		si := snaps[i]
		if !si.Finished || !si.Time.Before(b.snap.Time) || !b.usableReference(si.Snapshot, name) {
			continue
		}
		if slices.Contains(b.bases, si.Snapshot) {
			return reference{si.Snapshot, true}, nil
		}
		ok, err := b.holdBase(ctx, si.Snapshot, name)
		if err != nil {
			return reference{}, err
		}
		if ok {
			return reference{si.Snapshot, true}, nil
		}
	}
	return reference{}, nil
}

// usableReference tells whether snap may be archive name's reference:
// it has the archive, its last verification did not fail, and its key
// is this backup's (or both are plain).
func (b *Backup) usableReference(snap Snapshot, name string) bool {
	m, err := b.s.ReadManifest(snap)
	if err != nil {
		return false
	}
	if _, err := FindArchive(m, name); err != nil {
		return false
	}
	if vs, ok := m.VerifyState(); ok && vs.State == "failed" {
		return false
	}
	return b.keyMatches(m)
}

// holdBase locks snap shared and, on a remote store, names it in the
// writer's lease beside the bases held already; false (no error) when it
// cannot be held: being removed here, or forgotten in the bucket.
func (b *Backup) holdBase(ctx context.Context, snap Snapshot, name string) (bool, error) {
	if b.dry { // nothing locked nor named in a lease: a dry run writes nothing
		b.bases = append(b.bases, snap)
		return true, nil
	}
	l, err := b.s.lockSnapshot(ctx, snap, false, max(b.s.lockWait, manifestLockTimeout))
	if err != nil {
		return false, nil
	}
	if !b.usableReference(snap, name) { // removed or changed while we waited for the lock
		l.Unlock()
		return false, nil
	}
	ok, err := b.s.meta.NameBase(ctx, b, b.bases, snap)
	if err != nil || !ok {
		l.Unlock()
		if err != nil {
			return false, fmt.Errorf("snapshot %s: archive %s: %w", b.snap, name, err)
		}
		return false, nil
	}
	b.bases = append(b.bases, snap)
	b.locks = append(b.locks, l)
	return true, nil
}
