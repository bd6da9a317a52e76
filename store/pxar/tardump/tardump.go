package tardump

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store/pxar"
)

// Dump writes a walk of a file archive as a PAX tar stream. An entry
// the stream cannot hold (an invalid name, metadata no header can
// carry) or the walk cannot decode is left out before anything of it is
// written, and reported through Skip: the stream stays a valid tar.
type Dump struct {
	// Warn is told of what the stream leaves out by its nature (a
	// socket); Skip of an entry left out (name "" when the walk's error
	// names the place). Both must be set.
	Warn func(string)
	Skip func(name string, err error)

	ctx     context.Context
	acc     *pxar.Accessor
	root    []string // the dumped path's components below the archive root
	skipped int
	out     *stickyWriter
	buf     []byte
}

// New is the dump of path (its entry is given to Write) of acc.
func New(acc *pxar.Accessor, path string) *Dump {
	return &Dump{acc: acc, root: archivePath(path)}
}

// Skipped is the number of entries left out so far.
func (d *Dump) Skipped() int { return d.skipped }

// stickyWriter keeps the first error of its writer: the tar writer's
// errors are then told apart, a failed write (fatal) from a header it
// refused before writing anything.
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(p)
	s.err = err
	return n, err
}

// skipEntry reports an entry left out of the stream.
func (d *Dump) skipEntry(name string, err error) {
	d.skipped++
	d.Skip(name, err)
}

// archivePath splits a path inside an archive into its components, as
// LookupPath resolves it (empty and "." components left out).
func archivePath(path string) []string {
	var out []string
	for c := range strings.SplitSeq(path, "/") {
		if c != "" && c != "." {
			out = append(out, c)
		}
	}
	return out
}

// Write streams start and everything below it to w. Entries the walk
// cannot decode (and what lies below them) are skipped and the walk goes
// on.
func (d *Dump) Write(ctx context.Context, w io.Writer, start *pxar.Entry) error {
	d.ctx = ctx
	d.out = &stickyWriter{w: w}
	tw := tar.NewWriter(d.out)
	walk := d.acc.Walk(start)
	for {
		p, e, err := walk.Next(d.ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && d.ctx.Err() == nil {
			d.skipEntry("", err) // the error names the directory
			continue
		}
		if err != nil {
			return err
		}
		if err := d.entry(tw, p, e); err != nil {
			return err
		}
	}
	return tw.Close()
}

// tarName is the name of the entry at path p (relative to the dump's
// start) in the stream: "./" for a directory start, a non-directory
// start's own name, directories with a trailing slash. Names are made of
// archive names, which are never empty, ".", ".." or contain "/" or NUL
// (the decoder refuses them, and entry checks each again), so no name is
// absolute or climbs out.
func tarName(p string, e *pxar.Entry) string {
	switch {
	case p == "" && e.Kind == pxar.KindDir:
		return "./"
	case p == "":
		return e.Name
	case e.Kind == pxar.KindDir:
		return p + "/"
	}
	return p
}

func (d *Dump) entry(tw *tar.Writer, p string, e *pxar.Entry) error {
	name := tarName(p, e)
	if e.Kind == pxar.KindSocket {
		d.Warn(fmt.Sprintf("%s: socket skipped (a tar stream cannot hold one)", termsafe.Quote(name)))
		return nil
	}
	if p != "" && !pxar.ValidName(e.Name) {
		d.skipEntry(name, fmt.Errorf("%w: %q", pxar.ErrInvalidName, e.Name))
		return nil
	}
	h, err := tarHeader(name, e)
	if err != nil {
		d.skipEntry(name, err)
		return nil
	}
	if e.Kind == pxar.KindFile && e.Hardlink != "" && p != "" {
		if target, ok := d.linkTarget(e); ok {
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, target, 0
		}
	}
	if err := tw.WriteHeader(h); err != nil {
		if d.out.err == nil { // refused before anything was written
			d.skipEntry(name, err)
			return nil
		}
		return fmt.Errorf("%s: %w", termsafe.Quote(name), err)
	}
	if h.Typeflag != tar.TypeReg || h.Size == 0 {
		return nil
	}
	r, err := d.acc.Open(d.ctx, e)
	if err != nil {
		return fmt.Errorf("%s: %w", termsafe.Quote(name), err)
	}
	if d.buf == nil {
		d.buf = make([]byte, 1<<20)
	}
	// Plain Writer and Reader: copy in 1 MiB reads, which the payload
	// reader's readahead serves.
	n, err := io.CopyBuffer(struct{ io.Writer }{tw}, struct{ io.Reader }{r}, d.buf)
	if err == nil && n != h.Size {
		err = fmt.Errorf("content ended after %d of %d bytes", n, h.Size)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", termsafe.Quote(name), err)
	}
	return nil
}

// linkTarget returns the stream name of the file hard link e points to,
// if that is an earlier entry of this stream: the path the link records
// must lead, through directories only, to the very file (not to another
// link of it) and lie below the dumped path. Otherwise the link is
// written as a copy of the file.
func (d *Dump) linkTarget(e *pxar.Entry) (string, bool) {
	comps := archivePath(e.Hardlink)
	if len(comps) <= len(d.root) || strings.HasPrefix(e.Hardlink, "/") {
		return "", false
	}
	for i, c := range d.root {
		if comps[i] != c {
			return "", false
		}
	}
	t, err := d.acc.LookupPath(d.ctx, strings.Join(comps, "/"))
	if err != nil || t.ID != e.ID || t.Kind != pxar.KindFile || t.Hardlink != "" {
		return "", false
	}
	return strings.Join(comps[len(d.root):], "/"), true
}

// tarHeader describes entry e in PAX format: mode, numeric owner, mtime
// to the nanosecond, type, xattrs, file capabilities and ACLs.
func tarHeader(name string, e *pxar.Entry) (*tar.Header, error) {
	st := e.Metadata.Stat
	h := &tar.Header{Name: name, Mode: int64(st.Mode & 0o7777), Uid: int(st.UID), Gid: int(st.GID),
		ModTime: time.Unix(st.Mtime.Secs, int64(st.Mtime.Nanos)), Format: tar.FormatPAX,
		PAXRecords: map[string]string{}}
	switch e.Kind {
	case pxar.KindDir:
		h.Typeflag = tar.TypeDir
	case pxar.KindFile:
		if e.Size > math.MaxInt64 {
			return nil, fmt.Errorf("file size %d out of range", e.Size)
		}
		h.Typeflag, h.Size = tar.TypeReg, int64(e.Size)
	case pxar.KindSymlink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.Target
	case pxar.KindDevice:
		const most = 0o7777777 // the ustar fields; PAX has no records for them
		if e.Device.Major > most || e.Device.Minor > most {
			return nil, fmt.Errorf("device number %d, %d too large for a tar header", e.Device.Major, e.Device.Minor)
		}
		h.Typeflag, h.Devmajor, h.Devminor = tar.TypeChar, int64(e.Device.Major), int64(e.Device.Minor)
		if st.FileType() == pxar.ModeIFBLK {
			h.Typeflag = tar.TypeBlock
		}
	case pxar.KindFIFO:
		h.Typeflag = tar.TypeFifo
	default:
		return nil, fmt.Errorf("entry of kind %s", e.Kind)
	}
	return h, paxMetadata(h.PAXRecords, &e.Metadata)
}

// paxMetadata adds the records GNU tar (--xattrs, --acls) and star read:
// SCHILY.xattr.NAME for each xattr and the file capabilities,
// SCHILY.acl.access and SCHILY.acl.default for the POSIX ACLs.
func paxMetadata(rec map[string]string, m *pxar.Metadata) error {
	add := func(name string, v []byte) error {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return fmt.Errorf("xattr name %q cannot be a PAX record", name)
		}
		rec["SCHILY.xattr."+name] = string(v)
		return nil
	}
	for _, x := range m.Xattrs {
		if err := add(string(x.Name), x.Value); err != nil {
			return err
		}
	}
	if m.FCaps != nil {
		if err := add(pxar.XattrFCaps, m.FCaps); err != nil {
			return err
		}
	}
	access, err := m.ACL.AccessText(m.Stat.Mode)
	if err != nil {
		return err
	}
	def, err := m.ACL.DefaultText()
	if err != nil {
		return err
	}
	if access != "" {
		rec["SCHILY.acl.access"] = access
	}
	if def != "" {
		rec["SCHILY.acl.default"] = def
	}
	return nil
}
