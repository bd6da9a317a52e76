package filearchive

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/pxar"
)

// The reuse plan bounds what reused chunks carry besides the files that
// use them (padding), for a whole snapshot rather than for each run of
// files (see doc.go). Before the walk, the previous archive is read once
// to learn how many bytes of each of its payload chunks its files use
// (live). Counted per distinct chunk, as it is stored once and, through
// a cache, read once:
//
//	distinct = Σ size of the distinct chunks files use
//	live     = Σ bytes of PAYLOAD items (header and content) in them
//	padding  = distinct - live
//
// A restore or a tar through the mount of the new snapshot reads at least
// distinct bytes for live ones. If padding exceeds maxPadding·live, the
// chunks with the smallest share of live bytes are retired, least live
// first, until padding is at most 4/5 of the bound: files in a retired
// chunk are read again (dense new chunks) instead of being referenced.
// Retiring chunk c costs live(c) bytes written anew and saves
// size(c) - live(c) of padding, so the least live go first. The bound
// holds on the previous snapshot's use of its chunks; what changed since
// adds at most its own size to the new snapshot's padding.
//
// Memory: about 40 bytes per place of the previous payload index (its
// live bytes, the file crossing its end, its chunk) and 120 per distinct
// chunk, for the backup's length: a payload index of a million places
// (a terabyte of 1 MiB chunks) takes about 160 MB.
type reusePlan struct {
	retired []bool // by chunk position in the previous payload index
	// Figures of the previous snapshot's payload, per distinct chunk.
	distinct, live, padding uint64
	retiredChunks           int
	retiredLive             uint64 // bytes the retired chunks' files hold
	// ref counts the previous archive's regular files and their content.
	ref Totals
}

// DefaultMaxPadding is the default bound on a snapshot's padding as a
// share of its live payload bytes: reads of a whole snapshot are at most
// 1.25 times its file contents (plus what changed since the previous
// backup).
const DefaultMaxPadding = 0.25

// planReuse reads every file entry of the previous archive and decides
// which of its payload chunks are reused.
func (p *previous) planReuse(ctx context.Context, maxPadding float64) (*reusePlan, error) {
	x := p.payload
	u := newChunkUses(x.Len())
	var ref Totals
	w := p.acc.Walk(p.acc.Root())
	for {
		_, e, err := w.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		off, ok := e.PayloadRef()
		if e.Kind != pxar.KindFile || !ok {
			continue
		}
		from, to := off-pxar.HeaderSize, off+e.Size // the PAYLOAD item
		if off < pxar.HeaderSize || to > uint64(x.Size()) || to < off {
			return nil, fmt.Errorf("%s: %s: payload [%d, %d) outside the stream of %d bytes",
				x.Path(), e.Path(), from, to, x.Size())
		}
		u.add(x, span{from, to})
		if e.Hardlink == "" { // a hard link's content is its target's
			ref.Files++
			ref.Bytes += int64(e.Size)
		}
	}
	if err := x.Err(); err != nil {
		return nil, err
	}
	plan := u.plan(x, maxPadding)
	plan.ref = ref
	return plan, nil
}

// span is a PAYLOAD item's range [from, to) in the previous stream.
type span struct{ from, to uint64 }

// chunkUses is what the previous snapshot's files use of its payload
// chunks: bytes per position, and the file that crosses the end of each
// position into the next (a boundary is crossed by one file at most).
type chunkUses struct {
	live  []uint64
	cross []span // by position; to == 0: none
	hint  int
}

func newChunkUses(n int) *chunkUses {
	return &chunkUses{live: make([]uint64, n), cross: make([]span, n)}
}

// chunkIndex is the part of index.Index a plan needs.
type chunkIndex interface {
	Len() int
	Chunk(i int) (d chunk.Digest, start, end int64)
	Find(off int64, hint int) int
}

// overlaps calls f for each position the span lies in, with the bytes
// it has there.
func overlaps(x chunkIndex, sp span, hint int, f func(i int, n uint64)) int {
	i := x.Find(int64(sp.from), hint)
	for ; i < x.Len(); i++ {
		_, s, e := x.Chunk(i)
		f(i, min(uint64(e), sp.to)-max(uint64(s), sp.from))
		if uint64(e) >= sp.to {
			break
		}
	}
	return i
}

func (u *chunkUses) add(x chunkIndex, sp span) {
	u.hint = overlaps(x, sp, u.hint, func(i int, n uint64) {
		u.live[i] += n
		if _, _, e := x.Chunk(i); uint64(e) < sp.to {
			u.cross[i] = sp
		}
	})
}

// chunkUse is what the previous snapshot's files use of one distinct
// chunk.
type chunkUse struct {
	size, live uint64
	at         []int // its positions in the index
	retired    bool
}

// plan decides which chunks to retire (see reusePlan).
func (u *chunkUses) plan(x chunkIndex, maxPadding float64) *reusePlan {
	byDigest := make(map[chunk.Digest]*chunkUse)
	group := make([]*chunkUse, len(u.live)) // by position; nil: unused
	var used []*chunkUse
	for i, l := range u.live {
		if l == 0 {
			continue
		}
		d, s, e := x.Chunk(i)
		c := byDigest[d]
		if c == nil {
			c = &chunkUse{size: uint64(e - s)}
			byDigest[d] = c
			used = append(used, c)
		}
		c.live += l
		c.at = append(c.at, i)
		group[i] = c
	}
	p := &reusePlan{retired: make([]bool, len(u.live))}
	for _, c := range used {
		c.live = min(c.live, c.size) // a chunk used at several positions
		p.distinct += c.size
		p.live += c.live
	}
	p.padding = p.distinct - p.live
	if float64(p.padding) <= maxPadding*float64(p.live) {
		return p
	}
	// least live share first: c.live/c.size ascending
	slices.SortFunc(used, func(a, b *chunkUse) int { return cmp.Compare(a.live*b.size, b.live*a.size) })
	r := retirer{x: x, u: u, group: group, pad: p.padding, killed: make(map[uint64]bool)}
	target := 0.8 * maxPadding * float64(p.live)
	for _, c := range used {
		if float64(r.pad) <= target {
			break
		}
		if c.retired || c.live == 0 {
			continue
		}
		r.retire(c)
		p.retiredChunks++
	}
	for i, c := range group {
		p.retired[i] = c != nil && c.retired
	}
	p.retiredLive = r.reread
	return p
}

// retirer retires chunks: their files are read again, so the bytes those
// files have in the chunks next to them become padding there.
type retirer struct {
	x      chunkIndex
	u      *chunkUses
	group  []*chunkUse
	pad    uint64 // padding of the chunks still reused
	reread uint64 // bytes of the files read again
	killed map[uint64]bool
}

func (r *retirer) retire(c *chunkUse) {
	c.retired = true
	r.pad -= c.size - c.live
	r.reread += c.live
	for _, i := range c.at {
		if i > 0 {
			r.kill(r.u.cross[i-1])
		}
		r.kill(r.u.cross[i])
	}
}

// kill takes a file out of the chunks still reused, if it crosses into
// one.
func (r *retirer) kill(sp span) {
	if sp.to == 0 || r.killed[sp.from] {
		return
	}
	r.killed[sp.from] = true
	overlaps(r.x, sp, 0, func(i int, n uint64) {
		c := r.group[i]
		if c == nil || c.retired || c.live == 0 {
			return
		}
		n = min(n, c.live)
		c.live -= n
		if c.live == 0 { // nothing of it is used any more: not reused at all
			r.pad -= c.size - n
			return
		}
		r.pad += n
	})
}

// reusable reports whether none of the previous payload chunks holding
// [from, to) is retired.
func (p *reusePlan) reusable(x chunkIndex, from, to uint64) bool {
	if p == nil || p.retiredChunks == 0 {
		return true
	}
	ok := true
	overlaps(x, span{from, to}, 0, func(i int, _ uint64) { ok = ok && !p.retired[i] })
	return ok
}
