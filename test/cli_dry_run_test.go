package test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// backup --dry-run reads, chunks and looks up what a backup would, and
// says what it would read and store, while every file of the store
// keeps its name, size, mode and modification time.
func TestBackupDryRun(t *testing.T) {
	t.Parallel() // a store of its own
	dir, err := os.MkdirTemp(storetest.FastTempDir(), "cairn-dry-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	st := filepath.Join(dir, "store")
	e2e.MustCairn(t, "--store", st, "init")
	e2e.DryRunThenBackup(t, st, func() map[string]string { return storetest.DirState(t, st) })
}
