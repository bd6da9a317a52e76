package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
)

// dryRunSummary is what backup --json says, as far as a dry run is
// checked.
type dryRunSummary struct {
	Snapshot    string `json:"snapshot"`
	DryRun      bool   `json:"dry_run"`
	ReadBytes   int64  `json:"read_bytes"`
	NewChunks   int64  `json:"new_chunks"`
	NewBytes    int64  `json:"new_bytes"`
	NewStored   int64  `json:"new_stored_bytes"`
	Chunks      int64  `json:"chunks"`
	FileArchive []struct {
		Previous string `json:"previous"`
	} `json:"file_archives"`
}

// dryRunSources are an image, a blob and a tree; grow adds to the image
// and the tree.
func dryRunSources(t *testing.T) (args []string, grow func()) {
	t.Helper()
	dir := t.TempDir()
	img, conf, tree := filepath.Join(dir, "img"), filepath.Join(dir, "conf"), filepath.Join(dir, "tree")
	Write(t, img, string(RandBytes(3<<20, 1)), 0o644)
	Write(t, conf, "setting=1\n", 0o644)
	WriteTree(t, tree, map[string]string{"a": string(RandBytes(1<<20, 2)), "sub/b": "small"})
	grow = func() {
		f, err := os.OpenFile(img, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.Write(RandBytes(1<<20, 3)); err != nil {
			t.Fatal(err)
		}
		Write(t, filepath.Join(tree, "sub/new"), string(RandBytes(1<<20, 4)), 0o644)
	}
	return []string{"disk.img:" + img, "conf.blob:" + conf, "root.pxar:" + tree}, grow
}

// DryRunThenBackup backs up sources, grows them, dry-runs a backup of
// them (which must leave the store as check finds it before) and then
// makes it: the dry run's counts are the backup's.
func DryRunThenBackup(t *testing.T, st string, state func() map[string]string) {
	t.Helper()
	sources, grow := dryRunSources(t)
	backup := append([]string{"--store", st, "backup", "--type", "host", "--id", "dry", "--json"}, sources...)
	MustCairn(t, backup...)
	grow()
	before := state()
	var dry, real dryRunSummary
	DecodeJSON(t, MustCairn(t, append(backup, "--dry-run")...), &dry)
	if d := storetest.DiffState(before, state()); len(d) > 0 {
		t.Errorf("the dry run changed the store: %q", d)
	}
	if !dry.DryRun || dry.NewChunks == 0 || dry.NewStored == 0 || len(dry.FileArchive) != 1 || dry.FileArchive[0].Previous == "" {
		t.Errorf("dry run said %+v: want dry_run, new chunks, their stored size, the tree's reference", dry)
	}
	DecodeJSON(t, MustCairn(t, backup...), &real)
	if real.DryRun || real.NewChunks != dry.NewChunks || real.NewBytes != dry.NewBytes || real.NewStored != dry.NewStored ||
		real.Chunks != dry.Chunks || real.ReadBytes != dry.ReadBytes {
		t.Errorf("the backup did %+v, the dry run said %+v", real, dry)
	}
	before = state()
	r := MustCairn(t, append(backup[:len(backup)-len(sources)-1], append([]string{"-n"}, sources...)...)...)
	if !strings.Contains(r.Stdout, "dry run of snapshot host/dry/") || !strings.Contains(r.Stdout, "nothing written") {
		t.Errorf("a dry run after the backup: %s", r.Stdout)
	}
	if d := storetest.DiffState(before, state()); len(d) > 0 {
		t.Errorf("the dry run (-n) changed the store: %q", d)
	}
}
