package tardump

import (
	"archive/tar"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
)

// TestTarHeader: an entry's metadata becomes a PAX header, and what a
// tar header cannot hold is an error naming it, never a wrong header.
func TestTarHeader(t *testing.T) {
	g := uint64(6)
	e := &pxar.Entry{Name: "f", Kind: pxar.KindFile, Size: 5, Metadata: pxar.Metadata{
		Stat:   pxar.Stat{Mode: pxar.ModeIFREG | 0o4750, UID: 1 << 30, GID: 7, Mtime: pxar.Timestamp{Secs: -5, Nanos: 42}},
		Xattrs: []pxar.Xattr{{Name: []byte("user.a"), Value: []byte("b\x00c")}},
		FCaps:  []byte{1, 2},
		ACL:    pxar.ACL{Users: []pxar.ACLEntry{{ID: 9, Perm: 4}}, GroupObj: &g},
	}}
	h, err := tarHeader("d/f", e)
	if err != nil {
		t.Fatal(err)
	}
	if h.Typeflag != tar.TypeReg || h.Mode != 0o4750 || h.Uid != 1<<30 || h.ModTime.Unix() != -5 || h.ModTime.Nanosecond() != 42 ||
		h.PAXRecords["SCHILY.xattr.user.a"] != "b\x00c" || h.PAXRecords["SCHILY.xattr.security.capability"] != "\x01\x02" ||
		h.PAXRecords["SCHILY.acl.access"] != "user::rwx,user:9:r--,group::rw-,mask::r-x,other::---" {
		t.Errorf("header %+v", h)
	}
	var sb strings.Builder
	tw := tar.NewWriter(&sb)
	if err := tw.WriteHeader(h); err != nil {
		t.Errorf("archive/tar refuses the header: %v", err)
	}
	for _, c := range []struct {
		e    pxar.Entry
		want string
	}{
		{pxar.Entry{Kind: pxar.KindDevice, Device: pxar.Device{Major: 1 << 40}, Metadata: pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFCHR}}}, "device number"},
		{pxar.Entry{Kind: pxar.KindFile, Metadata: pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFREG}, Xattrs: []pxar.Xattr{{Name: []byte("user.a=b")}}}}, "cannot be a PAX record"},
		{pxar.Entry{Kind: pxar.KindFile, Size: 1 << 63, Metadata: pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFREG}}}, "out of range"},
		{pxar.Entry{Kind: pxar.KindFile, Metadata: pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFREG}, ACL: pxar.ACL{Users: []pxar.ACLEntry{{ID: 1, Perm: 9}}}}}, "out of range"},
	} {
		if _, err := tarHeader("x", &c.e); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.e, err, c.want)
		}
	}
}

// TestTarName: names are relative: "./" for a directory start, the
// start's own name otherwise, directories end in a slash.
func TestTarName(t *testing.T) {
	dir, file := &pxar.Entry{Kind: pxar.KindDir}, &pxar.Entry{Name: "f", Kind: pxar.KindFile}
	for _, c := range []struct {
		p    string
		e    *pxar.Entry
		want string
	}{{"", dir, "./"}, {"", file, "f"}, {"a/b", dir, "a/b/"}, {"a/f", file, "a/f"}} {
		if got := tarName(c.p, c.e); got != c.want {
			t.Errorf("tarName(%q) = %q, want %q", c.p, got, c.want)
		}
	}
}
