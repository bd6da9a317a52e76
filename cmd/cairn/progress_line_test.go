package main

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// TestProgressLineTrees: the archive at work, file counts, estimated
// totals and ETA marked "~", no ETA past an estimate, an ETA from the
// files when only their total is known, hostile names quoted.
func TestProgressLineTrees(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tree := progressSample{Archive: "root.pxar", ItemsName: "files", TotalApprox: true, ItemsApprox: true}
	withFigures := func(s progressSample, bytes, total, items, itemsTotal int64) progressSample {
		s.Bytes, s.Total, s.Items, s.ItemsTotal = bytes, total, items, itemsTotal
		return s
	}
	cases := []struct {
		name    string
		s       progressSample
		frame   int
		want    string
		without []string
	}{
		{"a reference's estimate", withFigures(tree, 30*mib, 100*mib, 10, 40), -1,
			"backup root.pxar: 30 MiB of ~100 MiB (30.0%), 10 of ~40 files, 10.5 MB/s, ETA ~7s, 3s elapsed", nil},
		{"past the estimate: no ETA", withFigures(tree, 120*mib, 100*mib, 50, 40), -1,
			"backup root.pxar: 120 MiB of ~100 MiB (100.0%), 50 of ~40 files, 41.9 MB/s, 3s elapsed", []string{"ETA"}},
		{"a first backup: no totals, no ETA", withFigures(tree, 30*mib, 0, 10, 0), 1,
			`\ backup root.pxar: 30 MiB, 10 files, 10.5 MB/s`, []string{"ETA", " of ", "~"}},
		{"a restore: files known exactly, the bar and ETA by files",
			progressSample{Archive: "root.pxar", Bytes: 30 * mib, Items: 10, ItemsTotal: 40, ItemsName: "files"}, 0,
			"[=====>              ] backup root.pxar: 30 MiB, 10 of 40 files, 10.5 MB/s, ETA 9s", []string{"~", "zeroes"}},
		{"a hostile name is quoted", progressSample{Archive: "e\x1b[31m\n.pxar", Bytes: mib}, -1,
			`backup "e\x1b[31m\n.pxar": 1.0 MiB`, []string{"\x1b", "\n"}},
	}
	for _, c := range cases {
		got := newMeter(t0).line("backup", c.s, t0.Add(3*time.Second), c.frame)
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		for _, w := range c.without {
			if strings.Contains(got, w) {
				t.Errorf("%s: %q has %q", c.name, got, w)
			}
		}
	}
}

// TestProgressLineWidth: a line longer than the terminal gives way in
// the label and archive name, keeping the figures; it never reaches the
// last column.
func TestProgressLineWidth(t *testing.T) {
	t0 := time.Now()
	s := progressSample{Archive: strings.Repeat("long-name-", 10) + ".pxar", Bytes: 30 * mib, Total: 100 * mib,
		TotalApprox: true, Items: 10, ItemsTotal: 40, ItemsName: "files"}
	for _, width := range []int{120, 100, 30} {
		got := newMeter(t0).fitLine("backup host/h/2026-01-01T00:00:00Z", s, t0.Add(3*time.Second), 0, width)
		if n := utf8.RuneCountInString(got); n >= width {
			t.Errorf("width %d: %d runes: %q", width, n, got)
		}
		if width >= 100 && (!strings.Contains(got, "…") || !strings.Contains(got, "ETA ~7s")) {
			t.Errorf("width %d: label not shortened or figures lost: %q", width, got)
		}
	}
	s.Archive = "root.pxar" // the label gives way before the archive's name
	if got := newMeter(t0).fitLine("backup host/h/2026-01-01T00:00:00Z", s, t0.Add(3*time.Second), 0, 110); !strings.Contains(got, "…") || !strings.Contains(got, "Z root.pxar: 30 MiB") {
		t.Errorf("width 110: %q", got)
	}
	if got := newMeter(t0).fitLine("backup", s, t0, 0, 300); strings.Contains(got, "…") {
		t.Errorf("shortened without need: %q", got)
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
	line := newMeter(time.Now()).line("restore", treeTotal{archive: "root.pxar", files: 9}.sample(st), time.Now(), -1)
	if !strings.HasPrefix(line, "restore root.pxar: 1.0 MiB, 3 of 9 files") || strings.Contains(line, "zero") {
		t.Errorf("tree restore line %q", line)
	}
}
