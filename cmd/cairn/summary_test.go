package main

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

const mib = 1 << 20

// TestProgressQuiet: -q shows no progress.
func TestProgressQuiet(t *testing.T) {
	var buf bytes.Buffer
	a := &app{stderr: &buf, quiet: true}
	a.startProgress("x", 1, func() (int64, string) { return 1, "" }).Stop()
	if buf.Len() != 0 {
		t.Errorf("-q printed %q", buf.String())
	}
}

func TestTapeExportGroupArgs(t *testing.T) {
	snaps, groups := splitGroups([]string{"vm/1", "ns/a/vm/2", "vm/3/latest", "vm/4/2024-01-01T00:00:00Z", "bad"})
	if strings.Join(groups, " ") != "vm/1 ns/a/vm/2" || strings.Join(snaps, " ") != "vm/3/latest vm/4/2024-01-01T00:00:00Z bad" {
		t.Errorf("snapshots %v, groups %v", snaps, groups)
	}
}

// TestBackupProgressSample: the totals of a backup's display. A tree is
// estimated from its reference while at work, exact once done; a tree
// without a reference or not begun leaves the total unknown.
func TestBackupProgressSample(t *testing.T) {
	specs := []backupSpec{{"disk.img", "/x"}, {"a.pxar", "/a"}, {"b.pxar", "/b"}}
	img := new(store.UploadStats)
	p := newBackupProgress(specs, 100, img)
	img.Bytes.Store(100)
	p.at(1)
	p.trees[1].Bytes.Store(5)
	p.trees[1].Files.Store(2)
	p.trees[1].Ref.Store(&filearchive.Totals{Files: 4, Bytes: 10})
	if s := p.sample(); s.Archive != "a.pxar" || s.Bytes != 105 || s.Items != 2 || s.Total != 0 || s.ItemsName != "files" {
		t.Errorf("b.pxar not begun: %+v", s)
	}
	p.at(2)
	p.trees[2].Ref.Store(&filearchive.Totals{Files: 1, Bytes: 7})
	if s := p.sample(); s.Archive != "b.pxar" || s.Total != 100+5+7 || s.ItemsTotal != 2+1 || !s.TotalApprox || !s.ItemsApprox {
		t.Errorf("the last tree at work: %+v", s)
	}
	p.at(3)
	if s := p.sample(); s.Archive != "b.pxar" || s.Total != 105 || s.ItemsTotal != 2 || s.TotalApprox || s.ItemsApprox {
		t.Errorf("all done: %+v", s)
	}
	p = newBackupProgress(specs[1:2], 0, img)
	if s := p.sample(); s.Total != 0 || s.ItemsTotal != 0 {
		t.Errorf("a first backup has a total: %+v", s)
	}
	var blobs atomic.Int64 // a blob's bytes count as they are read (it showed 0 B)
	p = newBackupProgress([]backupSpec{{"conf.blob", "-"}}, 0, new(store.UploadStats))
	p.blobs = &blobs
	blobs.Store(12)
	if s := p.sample(); s.Bytes != 12 || s.Archive != "conf.blob" {
		t.Errorf("a blob's backup: %+v", s)
	}
	st := new(restore.Stats)
	st.Bytes.Store(mib)
	st.ZeroBytes.Store(mib)
	st.Files.Store(3)
	line := progress.NewMeter(time.Now()).Line("restore", treeTotal{archive: "root.pxar", files: 9}.sample(st), time.Now(), -1)
	if !strings.HasPrefix(line, "restore root.pxar: 1.0 MiB, 3 of 9 files") || strings.Contains(line, "zero") {
		t.Errorf("tree restore line %q", line)
	}
}
