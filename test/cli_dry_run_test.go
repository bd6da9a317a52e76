package test

import (
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// backup --dry-run reads, chunks and looks up what a backup would, and
// says what it would read and store, while every file of the store
// keeps its name, size, mode and modification time. The store makes its
// chunk prefix directories on first use (LazyPrefixDirs): a dry run
// that made one would show in the store's state as a directory added,
// and each look at the state walks the few directories the backups
// made instead of 65,536 empty ones (7 of the test's 23 CPU-s, with
// `cairn init` making them and the cleanup removing them 3 more).
func TestBackupDryRun(t *testing.T) {
	t.Parallel() // a store of its own
	st := e2e.OwnStore(t, "cairn-dry-")
	e2e.DryRunThenBackup(t, st, func() map[string]string { return storetest.DirState(t, st) })
}
