package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// storeInodes is what a new store's directories take: the 65,536 chunk
// prefix directories and a few more (the root, .chunks, the lock file).
const storeInodes = 1<<16 + 8

// ErrNoInodes: the file system has too few free inodes for a store.
var ErrNoInodes = errors.New("too few free inodes")

// checkInodes refuses to make a store in dir (or the nearest directory
// above it that exists) when its file system has fewer free inodes than
// the store's directories take: Create would fail half-way with "no
// space left on device". A file system that does not count inodes
// (Files 0: btrfs, some network ones) is not checked.
func checkInodes(dir string) error {
	at, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for {
		var st unix.Statfs_t
		err := unix.Statfs(at, &st)
		if err == nil {
			if st.Files == 0 || st.Ffree >= storeInodes {
				return nil
			}
			return fmt.Errorf("%w: the file system of %s has %d free inodes, the store's chunk directories take %d (make the file system with more, e.g. mkfs.ext4 -N, or choose another)",
				ErrNoInodes, at, st.Ffree, storeInodes)
		}
		parent := filepath.Dir(at)
		if !errors.Is(err, fs.ErrNotExist) || parent == at {
			return nil // the creation says what is wrong
		}
		at = parent
	}
}
