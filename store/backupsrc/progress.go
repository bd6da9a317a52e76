package backupsrc

import (
	"slices"
	"sync/atomic"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
)

// Progress is what a backup's display shows: the archive at work,
// the bytes of all archives (images read, file contents stored), the
// files of the directory trees, and the totals when they are known. An
// image's size is known unless it is a stream; a tree's is known roughly
// from its reference (filearchive.Progress.Ref), once that is walked,
// and not at all on its first backup, nor for a tree not begun.
type Progress struct {
	specs    []Spec
	imgTotal int64 // the images' bytes; 0 with an image of unknown size
	images   bool  // there are images
	img      *store.UploadStats
	blobs    *atomic.Int64           // the blobs' bytes read (nil: none counted)
	trees    []*filearchive.Progress // by spec; nil for images and blobs
	current  atomic.Int64            // the spec at work; len(specs) when all are done
}

// NewProgress is the display of a backup of specs from in, whose images
// count in img.
func NewProgress(specs []Spec, in *Inputs, img *store.UploadStats) *Progress {
	p := newProgress(specs, in.total, img)
	p.blobs = &in.blobBytes
	return p
}

func newProgress(specs []Spec, imgTotal int64, img *store.UploadStats) *Progress {
	p := &Progress{specs: specs, imgTotal: imgTotal, img: img, trees: make([]*filearchive.Progress, len(specs))}
	for i, sp := range specs {
		if sp.IsPxar() {
			p.trees[i] = new(filearchive.Progress)
		}
		p.images = p.images || !sp.IsPxar() && !sp.IsBlob()
	}
	return p
}

// At marks spec i (len(specs): none, all done) as the one at work.
func (p *Progress) At(i int) { p.current.Store(int64(i)) }

// Sample is the display's sample now.
func (p *Progress) Sample() progress.Sample {
	cur := int(p.current.Load())
	s := progress.Sample{Bytes: p.img.Bytes.Load()}
	if p.blobs != nil {
		s.Bytes += p.blobs.Load()
	}
	if len(p.specs) > 0 { // the last one when all are done
		s.Archive = p.specs[min(cur, len(p.specs)-1)].Name
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
	if slices.ContainsFunc(p.specs, Spec.IsPxar) {
		s.ItemsName = "files"
	}
	if known {
		s.Total, s.ItemsTotal = p.imgTotal+total, files
	}
	return s
}

// Tree is the progress of spec i, a file archive (nil for others).
func (p *Progress) Tree(i int) *filearchive.Progress { return p.trees[i] }
