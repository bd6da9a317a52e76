package backupsrc

import (
	"sync/atomic"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// TestBackupProgressSample: the totals of a backup's display. A tree is
// estimated from its reference while at work, exact once done; a tree
// without a reference or not begun leaves the total unknown.
func TestBackupProgressSample(t *testing.T) {
	specs := []Spec{{Name: "disk.img", Path: "/x"}, {Name: "a.pxar", Path: "/a"}, {Name: "b.pxar", Path: "/b"}}
	img := new(store.UploadStats)
	p := newProgress(specs, 100, img)
	img.Bytes.Store(100)
	p.At(1)
	p.trees[1].Bytes.Store(5)
	p.trees[1].Files.Store(2)
	p.trees[1].Ref.Store(&filearchive.Totals{Files: 4, Bytes: 10})
	if s := p.Sample(); s.Archive != "a.pxar" || s.Bytes != 105 || s.Items != 2 || s.Total != 0 || s.ItemsName != "files" {
		t.Errorf("b.pxar not begun: %+v", s)
	}
	p.At(2)
	p.trees[2].Ref.Store(&filearchive.Totals{Files: 1, Bytes: 7})
	if s := p.Sample(); s.Archive != "b.pxar" || s.Total != 100+5+7 || s.ItemsTotal != 2+1 || !s.TotalApprox || !s.ItemsApprox {
		t.Errorf("the last tree at work: %+v", s)
	}
	p.At(3)
	if s := p.Sample(); s.Archive != "b.pxar" || s.Total != 105 || s.ItemsTotal != 2 || s.TotalApprox || s.ItemsApprox {
		t.Errorf("all done: %+v", s)
	}
	p = newProgress(specs[1:2], 0, img)
	if s := p.Sample(); s.Total != 0 || s.ItemsTotal != 0 {
		t.Errorf("a first backup has a total: %+v", s)
	}
	var blobs atomic.Int64 // a blob's bytes count as they are read (it showed 0 B)
	p = newProgress([]Spec{{Name: "conf.blob", Path: "-"}}, 0, new(store.UploadStats))
	p.blobs = &blobs
	blobs.Store(12)
	if s := p.Sample(); s.Bytes != 12 || s.Archive != "conf.blob" {
		t.Errorf("a blob's backup: %+v", s)
	}
}
