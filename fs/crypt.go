package fs

import (
	"errors"

	"github.com/cairnfs/cairn/store"
)

// An encrypted snapshot (issue 18) reads through the key the mount was
// given whose fingerprint its manifest names (store.Store.SnapshotKey).
// One whose key the mount lacks is a directory answering EACCES to every
// lookup and listing; one whose manifest signature fails answers EIO.
// Either is logged once per snapshot, never with key material.

// loggedError is an error already logged: listErr does not log it again.
type loggedError struct{ error }

func (e loggedError) Unwrap() error { return e.error }

// checkKey returns nil when snapshot snap (manifest m) can be read: it is
// plain, or the mount has its key and the manifest's signature holds.
func (f *mountFS) checkKey(snap store.Snapshot, m *store.Manifest) error {
	if _, err := f.s.SnapshotKey(snap, m); err != nil {
		return f.keyFailed(snap, err)
	}
	return nil
}

// keyFailed logs, once per snapshot, why snap cannot be read.
func (f *mountFS) keyFailed(snap store.Snapshot, err error) error {
	if _, dup := f.keyLogged.LoadOrStore(snap.String(), true); !dup {
		var km *store.KeyMissingError
		if errors.As(err, &km) {
			f.log.Warn("encrypted snapshot not readable: its key was not given; mount with --keyfile",
				"snapshot", snap.String(), "key", km.Fingerprint.Short())
		} else {
			f.log.Error("snapshot not readable", "snapshot", snap.String(), "err", err)
		}
	}
	return loggedError{err}
}
