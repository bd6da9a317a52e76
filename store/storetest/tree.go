package storetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// Want is metadata a test set on a source entry beyond its stat, which
// the archive must hold too.
type Want struct {
	Xattrs []pxar.Xattr
	ACL    *pxar.ACL
	FCaps  []byte
}

// TreeOptions tune CompareTree.
type TreeOptions struct {
	// Want is the extra metadata to expect, by path relative to the root.
	Want map[string]Want
	// SourceXattrs expects every entry's user.* xattrs, read from the
	// source, in the archive.
	SourceXattrs bool
	// Skip leaves out source entries (and what is below them) that the
	// archive is not meant to hold.
	Skip func(rel string) bool
}

// CompareTree checks every entry of the source tree at root (but those
// opt.Skip leaves out) against the archive: kind, stat, content, link
// targets, devices, hard links, the metadata opt asks for; and that the
// archive holds no more entries than the source.
func CompareTree(t testing.TB, a *pxar.Accessor, root string, opt TreeOptions) {
	t.Helper()
	ctx := context.Background()
	ids := map[uint64]uint64{} // source inode → archive entry ID
	count := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			rel = ""
		} else if opt.Skip != nil && opt.Skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		count++
		e, err := a.LookupPath(ctx, rel)
		if err != nil {
			t.Errorf("%q: %v", rel, err)
			return nil
		}
		w := opt.Want[rel]
		if opt.SourceXattrs && w.Xattrs == nil {
			w.Xattrs = UserXattrs(t, p)
		}
		compareEntry(t, a, p, rel, e, w, ids)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := CountEntries(t, a, a.Root()); n != count {
		t.Errorf("archive holds %d entries, source %d", n, count)
	}
}

// CountEntries counts dir and every entry below it.
func CountEntries(t testing.TB, a *pxar.Accessor, dir *pxar.Entry) int {
	t.Helper()
	r, err := a.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 1
	for {
		e, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return n
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind == pxar.KindDir {
			n += CountEntries(t, a, e)
		} else {
			n++
		}
	}
}

func compareEntry(t testing.TB, a *pxar.Accessor, p, rel string, e *pxar.Entry, w Want, ids map[uint64]uint64) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	m := e.Metadata
	s := m.Stat
	if s.Mode != uint64(st.Mode) || s.UID != st.Uid || s.GID != st.Gid ||
		s.Mtime.Secs != st.Mtim.Sec || int64(s.Mtime.Nanos) != st.Mtim.Nsec {
		t.Errorf("%q: stat %+v, source mode %o uid %d gid %d mtime %d.%09d", rel, s, st.Mode, st.Uid, st.Gid, st.Mtim.Sec, st.Mtim.Nsec)
	}
	if len(w.Xattrs) > 0 && !m.Equal(&pxar.Metadata{Stat: s, Xattrs: w.Xattrs, ACL: m.ACL, FCaps: m.FCaps, QuotaProjectID: m.QuotaProjectID}) {
		t.Errorf("%q: xattrs %q, want %q", rel, m.Xattrs, w.Xattrs)
	}
	if w.ACL != nil && !m.Equal(&pxar.Metadata{Stat: s, Xattrs: m.Xattrs, ACL: *w.ACL, FCaps: m.FCaps, QuotaProjectID: m.QuotaProjectID}) {
		t.Errorf("%q: ACL %+v, want %+v", rel, m.ACL, *w.ACL)
	}
	if w.FCaps != nil && !bytes.Equal(m.FCaps, w.FCaps) {
		t.Errorf("%q: fcaps %x, want %x", rel, m.FCaps, w.FCaps)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if id, ok := ids[st.Ino]; ok && id != e.ID {
			t.Errorf("%q: hard link resolves to %d, want %d", rel, e.ID, id)
		}
		ids[st.Ino] = e.ID
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := Content(t, a, e); !bytes.Equal(got, want) {
			t.Errorf("%q: content differs (%d vs %d bytes)", rel, len(got), len(want))
		}
	case unix.S_IFLNK:
		target, _ := os.Readlink(p)
		if e.Kind != pxar.KindSymlink || e.Target != target {
			t.Errorf("%q: symlink %v %q, want %q", rel, e.Kind, e.Target, target)
		}
	case unix.S_IFCHR, unix.S_IFBLK:
		if e.Kind != pxar.KindDevice || e.Device.Dev() != st.Rdev {
			t.Errorf("%q: device %+v, want rdev %#x", rel, e.Device, st.Rdev)
		}
	}
}

// Content reads a file entry's content from the archive.
func Content(t testing.TB, a *pxar.Accessor, e *pxar.Entry) []byte {
	t.Helper()
	r, err := a.Open(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// UserXattrs lists the user.* xattrs of path, sorted by name; none where
// the file system has none.
func UserXattrs(t testing.TB, path string) []pxar.Xattr {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return nil
	}
	var out []pxar.Xattr
	for _, name := range strings.Split(strings.TrimSuffix(string(buf[:n]), "\x00"), "\x00") {
		if !strings.HasPrefix(name, "user.") {
			continue
		}
		v := make([]byte, 4096)
		k, err := unix.Lgetxattr(path, name, v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, pxar.Xattr{Name: []byte(name), Value: v[:k]})
	}
	slices.SortFunc(out, func(a, b pxar.Xattr) int { return bytes.Compare(a.Name, b.Name) })
	return out
}

// ACLXattr encodes a system.posix_acl_access value (version 2) of
// entries {tag, perm, id}.
func ACLXattr(ents ...[3]uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range ents {
		b = binary.LittleEndian.AppendUint16(b, uint16(e[0]))
		b = binary.LittleEndian.AppendUint16(b, uint16(e[1]))
		b = binary.LittleEndian.AppendUint32(b, e[2])
	}
	return b
}
