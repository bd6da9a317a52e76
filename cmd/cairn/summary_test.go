package main

import (
	"bytes"
	"context"
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

func TestBackupSummaryRatios(t *testing.T) {
	snap := store.Snapshot{Group: store.Group{Type: "vm", ID: "1"}, Time: time.Unix(1e9, 0)}
	img := store.UploadTotals{Bytes: 10 * mib, ZeroBytes: mib, Chunks: 10, NewChunks: 4, NewBytes: 4 * mib, NewStored: 2 * mib}
	px := store.UploadTotals{Bytes: 2 * mib, Chunks: 2, NewChunks: 1, NewBytes: mib, NewStored: mib}
	sum := newBackupSummary(snap, img, px, []pxarSummary{{ReadBytes: 3 * mib, ReusedBytes: 5 * mib, Bytes: 8 * mib}}, time.Second)
	if sum.Bytes != 12*mib || sum.ReadBytes != 13*mib || sum.NewBytes != 5*mib || sum.NewStored != 3*mib ||
		sum.DedupBytes != 7*mib || sum.ReusedBytes != 5*mib || sum.DedupRatio != 12.0/5 || sum.CompressRatio != 5.0/3 {
		t.Errorf("summary %+v", sum)
	}
	none := newBackupSummary(snap, store.UploadTotals{Bytes: mib, Chunks: 1}, store.UploadTotals{}, nil, time.Second)
	if none.DedupRatio != 0 || none.CompressRatio != 0 || ratio(none.DedupRatio) != "- (nothing new)" {
		t.Errorf("nothing new: %+v", none)
	}
	var out bytes.Buffer
	a := &app{stdout: &out, ctx: context.Background()}
	if err := a.printBackupSummary(backupOpts{}, sum); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"read      13 MiB", "reused    5.0 MiB", "12 MiB in 12 chunks: 5.0 MiB new in 5, 7.0 MiB already stored (1.0 MiB zero)",
		"stored    3.0 MiB", "dedup     2.40x", "compress  1.67x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, out.String())
		}
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
