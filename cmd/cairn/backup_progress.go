package main

import (
	"slices"
	"sync/atomic"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// backupProgress is what a backup's display shows: the archive at work,
// the bytes of all archives (images read, file contents stored), the
// files of the directory trees, and the totals when they are known. An
// image's size is known unless it is a stream; a tree's is known roughly
// from its reference (filearchive.Progress.Ref), once that is walked,
// and not at all on its first backup, nor for a tree not begun.
type backupProgress struct {
	specs    []backupSpec
	imgTotal int64 // the images' bytes; 0 with an image of unknown size
	images   bool  // there are images
	img      *store.UploadStats
	blobs    *atomic.Int64           // the blobs' bytes read (nil: none counted)
	trees    []*filearchive.Progress // by spec; nil for images and blobs
	current  atomic.Int64            // the spec at work; len(specs) when all are done
}

func newBackupProgress(specs []backupSpec, imgTotal int64, img *store.UploadStats) *backupProgress {
	p := &backupProgress{specs: specs, imgTotal: imgTotal, img: img, trees: make([]*filearchive.Progress, len(specs))}
	for i, sp := range specs {
		if sp.isPxar() {
			p.trees[i] = new(filearchive.Progress)
		}
		p.images = p.images || !sp.isPxar() && !sp.isBlob()
	}
	return p
}

// at marks spec i (len(specs): none, all done) as the one at work.
func (p *backupProgress) at(i int) { p.current.Store(int64(i)) }

func (p *backupProgress) sample() progress.Sample {
	cur := int(p.current.Load())
	s := progress.Sample{Bytes: p.img.Bytes.Load()}
	if p.blobs != nil {
		s.Bytes += p.blobs.Load()
	}
	if len(p.specs) > 0 { // the last one when all are done
		s.Archive = p.specs[min(cur, len(p.specs)-1)].name
	}
	known := !p.images || p.imgTotal > 0
	var total, files int64
	for i, t := range p.trees {
		if t == nil {
			continue
		}
		done, doneFiles := t.Bytes.Load(), t.Files.Load()
		s.Bytes += done
		s.Items += doneFiles
		switch ref := t.Ref.Load(); {
		case i < cur:
			total, files = total+done, files+doneFiles
		case i == cur && ref != nil:
			total, files = total+ref.Bytes, files+ref.Files
			s.TotalApprox, s.ItemsApprox = true, true
		default: // a first backup, or a tree not begun
			known = false
		}
	}
	if slices.ContainsFunc(p.specs, backupSpec.isPxar) {
		s.ItemsName = "files"
	}
	if known {
		s.Total, s.ItemsTotal = p.imgTotal+total, files
	}
	return s
}
