package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
)

// PxarTrees opens pxar file archives (split v2 or single-stream) as
// trees, with store/pxar's random-access reader over the archive's
// streams: a lookup reads a directory's goodbye table, never its
// siblings, and file contents come through the mount's chunk cache.
type PxarTrees struct{}

var _ TreeOpener = PxarTrees{}

// OpenTree implements TreeOpener.
func (PxarTrees) OpenTree(ctx context.Context, a store.Archive, open StreamOpener) (ArchiveTree, error) {
	meta, err := open(ctx, a.Files[0])
	if err != nil {
		return nil, err
	}
	t := &pxarTree{meta: meta}
	var payload Stream
	if a.Kind == store.ArchiveSplitPxar {
		if len(a.Files) < 2 {
			meta.Close()
			return nil, fmt.Errorf("archive %s: no payload stream", a.Name)
		}
		if payload, err = open(ctx, a.Files[1]); err != nil {
			meta.Close()
			return nil, err
		}
		t.payload = payload
	}
	var pr io.ReaderAt // stays a nil interface for single-stream archives
	var psize int64
	if payload != nil {
		pr, psize = payload, payload.Size()
	}
	acc, err := pxar.NewAccessor(ctx, meta, meta.Size(), pr, psize)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("archive %s: %w", a.Name, err)
	}
	t.acc = acc
	return t, nil
}

type pxarTree struct {
	acc           *pxar.Accessor
	meta, payload Stream
}

func (t *pxarTree) Close() error {
	err := t.meta.Close()
	if t.payload != nil {
		if perr := t.payload.Close(); err == nil {
			err = perr
		}
	}
	return err
}

func treeEntry(e *pxar.Entry) TreeEntry {
	st := e.Metadata.Stat
	te := TreeEntry{ID: e.ID, Name: e.Name, Mode: uint32(st.Mode), UID: st.UID, GID: st.GID,
		Mtime: time.Unix(st.Mtime.Secs, int64(st.Mtime.Nanos)), Ref: e.Ref().Words()}
	switch e.Kind {
	case pxar.KindFile:
		te.Size = e.Size
	case pxar.KindSymlink:
		te.Size = uint64(len(e.Target))
	case pxar.KindDevice:
		te.Rdev = e.Device.Dev()
	}
	return te
}

func (t *pxarTree) Root(ctx context.Context) (TreeEntry, error) { return treeEntry(t.acc.Root()), nil }

// entry decodes the entry of a TreeEntry again from its pxar.Ref.
func (t *pxarTree) entry(ctx context.Context, te TreeEntry) (*pxar.Entry, error) {
	return t.reload(ctx, te.Ref)
}

func (t *pxarTree) reload(ctx context.Context, ref TreeRef) (*pxar.Entry, error) {
	return t.acc.Reload(ctx, pxar.RefOfWords(ref))
}

func (t *pxarTree) Entry(ctx context.Context, ref TreeRef) (TreeEntry, error) {
	e, err := t.reload(ctx, ref)
	if err != nil {
		return TreeEntry{}, err
	}
	return treeEntry(e), nil
}

func (t *pxarTree) Lookup(ctx context.Context, dir TreeEntry, name string) (TreeEntry, error) {
	d, err := t.entry(ctx, dir)
	if err != nil {
		return TreeEntry{}, err
	}
	e, err := t.acc.Lookup(ctx, d, name)
	if err != nil {
		return TreeEntry{}, err
	}
	return treeEntry(e), nil
}

// ReadDir lists in stored order: name order, and the order of the
// contents in the payload stream, so a reader walking the listing (tar,
// cp -a) reads the payload forward and gets it loaded ahead. Positions
// are the entries' offsets in the archive.
func (t *pxarTree) ReadDir(ctx context.Context, dir TreeEntry) (DirStream, error) {
	d, err := t.entry(ctx, dir)
	if err != nil {
		return nil, err
	}
	r, err := t.acc.ReadDirSorted(ctx, d)
	if err != nil {
		return nil, err
	}
	return &pxarDir{r: r, start: r.Pos()}, nil
}

// pxarDir is a listing of a directory of a pxar archive.
type pxarDir struct {
	r     *pxar.SortedDirReader
	start uint64 // the position of the first entry, listed as 0
}

func (d *pxarDir) Next(ctx context.Context) (TreeEntry, uint64, error) {
	e, err := d.r.Next(ctx)
	if err != nil {
		return TreeEntry{}, 0, err
	}
	return treeEntry(e), d.r.Pos(), nil
}

func (d *pxarDir) Seek(ctx context.Context, pos uint64) error {
	if pos == 0 {
		pos = d.start
	}
	if err := d.r.Seek(ctx, pos); err != nil {
		if errors.Is(err, pxar.ErrPosition) {
			return fmt.Errorf("%w: %w", ErrBadPosition, err)
		}
		return err
	}
	return nil
}

func (d *pxarDir) Close() {}

func (t *pxarTree) Open(ctx context.Context, file TreeEntry) (TreeFile, error) {
	e, err := t.entry(ctx, file)
	if err != nil {
		return nil, err
	}
	sec, err := t.acc.Open(ctx, e)
	if err != nil {
		return nil, err
	}
	outer, base, n := sec.Outer()
	s, ok := outer.(interface {
		ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
	})
	if !ok {
		return nil, fmt.Errorf("pxar stream is not a cairn stream")
	}
	return &pxarFile{s: s, base: base, size: n}, nil
}

func (t *pxarTree) Readlink(ctx context.Context, link TreeEntry) (string, error) {
	e, err := t.entry(ctx, link)
	if err != nil {
		return "", err
	}
	return e.Target, nil
}

// Xattrs returns the entry's extended attributes, its POSIX ACLs as the
// system.posix_acl_* attributes and its file capabilities.
func (t *pxarTree) Xattrs(ctx context.Context, e TreeEntry) ([]Xattr, error) {
	pe, err := t.entry(ctx, e)
	if err != nil {
		return nil, err
	}
	m := &pe.Metadata
	var out []Xattr
	for _, x := range m.Xattrs {
		out = append(out, Xattr{Name: string(x.Name), Value: x.Value})
	}
	access, err := m.ACL.AccessXattr(m.Stat.Mode) // nil when the mode says it all
	if err != nil {
		return nil, err
	}
	if access != nil {
		out = append(out, Xattr{Name: "system.posix_acl_access", Value: access})
	}
	def, err := m.ACL.DefaultXattr() // nil without a default ACL
	if err != nil {
		return nil, err
	}
	if def != nil {
		out = append(out, Xattr{Name: "system.posix_acl_default", Value: def})
	}
	if m.FCaps != nil {
		out = append(out, Xattr{Name: "security.capability", Value: m.FCaps})
	}
	return out, nil
}

// pxarFile is a file's content: a section of a stream, read with the
// caller's context so that an interrupted read stops.
type pxarFile struct {
	s interface {
		ReadAtContext(context.Context, []byte, int64) (int, error)
	}
	base, size int64
}

func (f *pxarFile) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	if rest := f.size - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	return f.s.ReadAtContext(ctx, p, f.base+off)
}

func (f *pxarFile) Close() error { return nil }
