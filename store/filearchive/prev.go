package filearchive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/pxar"
)

// previous is the same archive in the group's previous snapshot, read
// alongside the walk. The walk visits names in the order they are stored
// in, so each directory of the previous archive is read once, forward,
// by a cursor; only the directories on the current path are open.
type previous struct {
	snap    store.Snapshot
	acc     *pxar.Accessor
	payload index.Index // the previous payload index, for its chunks
	stats   *statReader // nil: the previous archive has no stat table
	dirs    []prevDir   // dirs[0] is the root
	close   func() error
}

type prevDir struct {
	path string     // relative path; "" for the root
	cur  *dirCursor // nil: no such directory in the previous archive
}

// dirCursor reads a previous directory in stored (name) order.
type dirCursor struct {
	r    *pxar.SortedDirReader
	peek *pxar.Entry
	done bool
}

func newDirCursor(ctx context.Context, acc *pxar.Accessor, dir *pxar.Entry) (*dirCursor, error) {
	r, err := acc.ReadDirSorted(ctx, dir)
	if err != nil {
		return nil, err
	}
	return &dirCursor{r: r}, nil
}

// seek returns the entry called name, or nil. Names asked for must
// increase (byte-wise), as the walk's do.
func (c *dirCursor) seek(ctx context.Context, name string) (*pxar.Entry, error) {
	for !c.done {
		if c.peek == nil {
			e, err := c.r.Next(ctx)
			if errors.Is(err, io.EOF) {
				c.done = true
				break
			}
			if err != nil {
				return nil, err
			}
			c.peek = e
		}
		switch {
		case c.peek.Name == name:
			return c.peek, nil
		case c.peek.Name > name:
			return nil, nil
		}
		c.peek = nil
	}
	return nil, nil
}

// lookup returns the previous archive's entry at relative path rel, or
// nil if it has none.
func (p *previous) lookup(ctx context.Context, rel string) (*pxar.Entry, error) {
	dir, name := "", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, name = rel[:i], rel[i+1:]
	}
	top, err := p.enter(ctx, dir)
	if err != nil || top == nil {
		return nil, err
	}
	return top.seek(ctx, name)
}

// enter makes dir the top of the directory stack and returns its cursor.
func (p *previous) enter(ctx context.Context, dir string) (*dirCursor, error) {
	for len(p.dirs) > 1 {
		top := p.dirs[len(p.dirs)-1].path
		if dir == top || strings.HasPrefix(dir, top+"/") {
			break
		}
		p.dirs = p.dirs[:len(p.dirs)-1]
	}
	for {
		top := p.dirs[len(p.dirs)-1]
		if top.path == dir {
			return top.cur, nil
		}
		rest := dir
		if top.path != "" {
			rest = dir[len(top.path)+1:]
		}
		comp, _, _ := strings.Cut(rest, "/")
		next := prevDir{path: comp}
		if top.path != "" {
			next.path = top.path + "/" + comp
		}
		if top.cur != nil {
			e, err := top.cur.seek(ctx, comp)
			if err != nil {
				return nil, err
			}
			if e != nil && e.Kind == pxar.KindDir {
				if next.cur, err = newDirCursor(ctx, p.acc, e); err != nil {
					return nil, err
				}
			}
		}
		p.dirs = append(p.dirs, next)
	}
}

// record returns the stat table record of a previous entry.
func (p *previous) record(e *pxar.Entry) (statRecord, bool, error) {
	if p.stats == nil {
		return statRecord{}, false, nil
	}
	return p.stats.find(e.ID)
}

// chunks returns the previous payload chunks that cover [from, to) and
// the offset at which the first one starts.
func (p *previous) chunks(from, to uint64) ([]ChunkRef, uint64, error) {
	x := p.payload
	if to > uint64(x.Size()) || from >= to {
		return nil, 0, fmt.Errorf("%s: payload range [%d, %d) outside the stream of %d bytes", x.Path(), from, to, x.Size())
	}
	i := x.Find(int64(from), 0)
	_, start, _ := x.Chunk(i)
	var out []ChunkRef
	for ; i < x.Len(); i++ {
		d, s, e := x.Chunk(i)
		out = append(out, ChunkRef{Digest: d, Size: int(e - s)})
		if uint64(e) >= to {
			break
		}
	}
	return out, uint64(start), nil
}
