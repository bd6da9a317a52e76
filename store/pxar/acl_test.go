package pxar_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

var aclBytes = storetest.ACLXattr

func TestACLXattr(t *testing.T) {
	const u = 0xffffffff // ACL_UNDEFINED_ID
	// user::rw- user:1000:r-- user:7:rwx group::r-- group:50:rw- mask::rw- other::---
	acc := aclBytes([3]uint32{1, 6, u}, [3]uint32{2, 7, 7}, [3]uint32{2, 4, 1000}, [3]uint32{4, 4, u},
		[3]uint32{8, 6, 50}, [3]uint32{0x10, 6, u}, [3]uint32{0x20, 0, u})
	var a pxar.ACL
	if err := a.SetAccessFromXattr(acc); err != nil {
		t.Fatal(err)
	}
	if len(a.Users) != 2 || a.Users[0] != (pxar.ACLEntry{ID: 7, Perm: 7}) || a.GroupObj == nil || *a.GroupObj != 4 {
		t.Fatalf("access ACL %+v", a)
	}
	// The kernel keeps the mask in the mode's group bits.
	back, err := a.AccessXattr(pxar.ModeIFREG | 0o660)
	want := aclBytes([3]uint32{1, 6, u}, [3]uint32{2, 7, 7}, [3]uint32{2, 4, 1000}, [3]uint32{4, 4, u},
		[3]uint32{8, 6, 50}, [3]uint32{0x10, 6, u}, [3]uint32{0x20, 0, u})
	if err != nil || !bytes.Equal(back, want) {
		t.Errorf("AccessXattr = %x, %v; want %x", back, err, want)
	}
	// Without a mask, the owning group's entry is the mode's.
	var plain pxar.ACL
	if err := plain.SetAccessFromXattr(aclBytes([3]uint32{1, 6, u}, [3]uint32{4, 4, u}, [3]uint32{0x20, 4, u})); err != nil {
		t.Fatal(err)
	}
	if !plain.IsEmpty() {
		t.Errorf("minimal ACL stored as %+v", plain)
	}
	if b, _ := plain.AccessXattr(0o644); b != nil {
		t.Errorf("minimal ACL gives xattr %x", b)
	}

	def := aclBytes([3]uint32{1, 7, u}, [3]uint32{2, 7, 2000}, [3]uint32{4, 5, u}, [3]uint32{0x10, 7, u}, [3]uint32{0x20, 0, u})
	var d pxar.ACL
	if err := d.SetDefaultFromXattr(def); err != nil {
		t.Fatal(err)
	}
	if d.Default == nil || *d.Default != (pxar.ACLDefault{UserObj: 7, GroupObj: 5, Other: 0, Mask: 7}) || len(d.DefaultUsers) != 1 {
		t.Fatalf("default ACL %+v", d)
	}
	if back, err := d.DefaultXattr(); err != nil || !bytes.Equal(back, def) {
		t.Errorf("DefaultXattr = %x, %v; want %x", back, err, def)
	}

	for _, bad := range [][]byte{nil, {1, 0, 0, 0}, aclBytes([3]uint32{0x40, 0, u}), append(aclBytes(), 1, 2, 3)} {
		if err := new(pxar.ACL).SetAccessFromXattr(bad); !errors.Is(err, pxar.ErrInvalid) {
			t.Errorf("xattr %x: %v", bad, err)
		}
	}
}

// TestACLText: the text form GNU tar records (acl_to_text with numeric
// ids, comma separated), for an access ACL with a mask and for a default
// ACL; an ACL that is just the mode has none.
func TestACLText(t *testing.T) {
	const u = 0xffffffff
	var a pxar.ACL
	if err := a.SetAccessFromXattr(aclBytes([3]uint32{1, 6, u}, [3]uint32{2, 7, 7}, [3]uint32{4, 4, u},
		[3]uint32{8, 1, 50}, [3]uint32{0x10, 7, u}, [3]uint32{0x20, 0, u})); err != nil {
		t.Fatal(err)
	}
	if got, err := a.AccessText(pxar.ModeIFREG | 0o670); err != nil || got != "user::rw-,user:7:rwx,group::r--,group:50:--x,mask::rwx,other::---" {
		t.Errorf("AccessText = %q, %v", got, err)
	}
	if err := a.SetDefaultFromXattr(aclBytes([3]uint32{1, 7, u}, [3]uint32{4, 5, u}, [3]uint32{0x20, 4, u})); err != nil {
		t.Fatal(err)
	}
	if got, err := a.DefaultText(); err != nil || got != "user::rwx,group::r-x,other::r--" {
		t.Errorf("DefaultText = %q, %v", got, err)
	}
	var plain pxar.ACL
	if got, err := plain.AccessText(0o644); got != "" || err != nil {
		t.Errorf("empty ACL: %q, %v", got, err)
	}
	if got, err := plain.DefaultText(); got != "" || err != nil {
		t.Errorf("empty default ACL: %q, %v", got, err)
	}
}
