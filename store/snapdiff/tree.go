package snapdiff

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store/pxar"
)

// treeDiff walks two file archives in step. Both walks come in name
// order component by component (pxar.Walker), so a merge of the two
// finds every added, removed and common path while holding only the
// open directories of each: memory never grows with the number of paths.
type treeDiff struct {
	ctx      context.Context
	from, to *pxar.Accessor
	content  bool
	emit     func(Change) error
	buf      []byte
}

// diffCursor is one side of the merge.
type diffCursor struct {
	w     *pxar.Walker
	side  string
	path  string
	e     *pxar.Entry
	begun bool
	done  bool
}

// next moves to the next entry, checking that paths increase: an
// archive written in any order cannot be merged.
func (c *diffCursor) next(ctx context.Context) error {
	p, e, err := c.w.Next(ctx)
	if errors.Is(err, io.EOF) {
		c.done = true
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", c.side, err)
	}
	if c.begun && comparePaths(p, c.path) <= 0 {
		return fmt.Errorf("%s: %s comes after %s: entries not in name order (diff needs archives written in name order, as cairn and PBS write them)",
			c.side, termsafe.Quote("/"+p), termsafe.Quote("/"+c.path))
	}
	c.begun, c.path, c.e = true, p, e
	return nil
}

// comparePaths orders relative paths as a walk in name order visits
// them: component by component, byte-wise ("a/z" before "a.b").
func comparePaths(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] == b[i] {
			continue
		}
		switch {
		case a[i] == '/':
			return -1
		case b[i] == '/':
			return 1
		case a[i] < b[i]:
			return -1
		}
		return 1
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// Trees reports every path added, removed or changed from file archive
// from to file archive to, in path order, to emit; content: compare the
// contents of regular files of the same size too (else size and mtime
// tell). Both archives must be written in name order.
func Trees(ctx context.Context, from, to *pxar.Accessor, content bool, emit func(Change) error) error {
	t := &treeDiff{ctx: ctx, from: from, to: to, content: content, emit: emit}
	return t.run()
}

func (t *treeDiff) run() error {
	x := &diffCursor{w: t.from.Walk(t.from.Root()), side: "old archive"}
	y := &diffCursor{w: t.to.Walk(t.to.Root()), side: "new archive"}
	if err := x.next(t.ctx); err != nil {
		return err
	}
	if err := y.next(t.ctx); err != nil {
		return err
	}
	for !x.done || !y.done {
		c := 0
		switch {
		case x.done:
			c = 1
		case y.done:
			c = -1
		default:
			c = comparePaths(x.path, y.path)
		}
		var err error
		switch {
		case c < 0:
			err = t.report("removed", x.path, x.e, nil)
		case c > 0:
			err = t.report("added", y.path, y.e, nil)
		default:
			var why []string
			if why, err = t.compare(x.e, y.e); err == nil && len(why) > 0 {
				err = t.report("changed", y.path, y.e, why)
			}
		}
		if err == nil && c <= 0 {
			err = x.next(t.ctx)
		}
		if err == nil && c >= 0 {
			err = y.next(t.ctx)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (t *treeDiff) report(change, path string, e *pxar.Entry, why []string) error {
	p := "/" + path
	if e.Kind == pxar.KindDir && path != "" {
		p += "/"
	}
	return t.emit(Change{Path: p, Change: change, Type: e.Kind.String(), Reasons: why})
}

// compare returns why two entries at the same path differ.
func (t *treeDiff) compare(x, y *pxar.Entry) ([]string, error) {
	if x.Kind != y.Kind {
		return []string{"type"}, nil
	}
	var why []string
	add := func(differ bool, reason string) {
		if differ {
			why = append(why, reason)
		}
	}
	sx, sy := x.Metadata.Stat, y.Metadata.Stat
	add(x.Size != y.Size, "size")
	add(sx.Mtime != sy.Mtime, "mtime")
	add(sx.Mode&0o7777 != sy.Mode&0o7777, "mode")
	add(sx.UID != sy.UID || sx.GID != sy.GID, "owner")
	add(sx.Flags != sy.Flags, "flags")
	add(x.Target != y.Target, "target")
	add(x.Device != y.Device, "device")
	add(x.Hardlink != y.Hardlink, "link")
	xa := pxar.Metadata{Xattrs: x.Metadata.Xattrs, FCaps: x.Metadata.FCaps, QuotaProjectID: x.Metadata.QuotaProjectID}
	ya := pxar.Metadata{Xattrs: y.Metadata.Xattrs, FCaps: y.Metadata.FCaps, QuotaProjectID: y.Metadata.QuotaProjectID}
	add(!xa.Equal(&ya), "xattrs")
	xa, ya = pxar.Metadata{ACL: x.Metadata.ACL}, pxar.Metadata{ACL: y.Metadata.ACL}
	add(!xa.Equal(&ya), "acl")
	if t.content && x.Kind == pxar.KindFile && x.Size == y.Size && x.Size > 0 {
		same, err := t.sameContent(x, y)
		if err != nil {
			return nil, err
		}
		add(!same, "content")
	}
	return why, nil
}

// sameContent compares the SHA-256 of two files' payloads.
func (t *treeDiff) sameContent(x, y *pxar.Entry) (bool, error) {
	var sums [2][]byte
	for i, side := range []struct {
		acc *pxar.Accessor
		e   *pxar.Entry
	}{{t.from, x}, {t.to, y}} {
		r, err := side.acc.Open(t.ctx, side.e)
		if err != nil {
			return false, fmt.Errorf("%s: %w", side.e.Path(), err)
		}
		if t.buf == nil {
			t.buf = make([]byte, 1<<20)
		}
		h := sha256.New()
		if _, err := io.CopyBuffer(h, struct{ io.Reader }{r}, t.buf); err != nil {
			return false, fmt.Errorf("%s: %w", side.e.Path(), err)
		}
		sums[i] = h.Sum(nil)
	}
	return bytes.Equal(sums[0], sums[1]), nil
}
