package pxar

import (
	"cmp"
	"fmt"
	"slices"
)

// Extended attribute names that pxar stores in dedicated items instead of
// XATTR items.
const (
	XattrACLAccess  = "system.posix_acl_access"
	XattrACLDefault = "system.posix_acl_default"
	XattrFCaps      = "security.capability"
)

// Linux POSIX ACL xattr layout (linux/posix_acl_xattr.h): a u32 version 2,
// then entries {tag u16, perm u16, id u32}, little-endian.
const (
	aclXattrVersion = 2
	aclTagUserObj   = 0x01
	aclTagUser      = 0x02
	aclTagGroupObj  = 0x04
	aclTagGroup     = 0x08
	aclTagMask      = 0x10
	aclTagOther     = 0x20
	aclUndefinedID  = 0xffffffff
)

type aclXattrEntry struct {
	tag  uint16
	perm uint16
	id   uint32
}

func parseACLXattr(b []byte) ([]aclXattrEntry, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 || le.Uint32(b) != aclXattrVersion {
		return nil, fmt.Errorf("%w: POSIX ACL xattr of %d bytes malformed", ErrInvalid, len(b))
	}
	var out []aclXattrEntry
	for o := 4; o < len(b); o += 8 {
		out = append(out, aclXattrEntry{tag: le.Uint16(b[o:]), perm: le.Uint16(b[o+2:]), id: le.Uint32(b[o+4:])})
	}
	return out, nil
}

// aclParts sorts the entries of one ACL into PBS's pieces.
type aclParts struct {
	users, groups                  []ACLEntry
	userObj, groupObj, other, mask uint64
	hasUser, hasGroup, hasO, hasM  bool
}

func splitACL(ents []aclXattrEntry) (*aclParts, error) {
	p := &aclParts{}
	for _, e := range ents {
		perm := uint64(e.perm)
		switch e.tag {
		case aclTagUserObj:
			p.userObj, p.hasUser = perm, true
		case aclTagGroupObj:
			p.groupObj, p.hasGroup = perm, true
		case aclTagOther:
			p.other, p.hasO = perm, true
		case aclTagMask:
			p.mask, p.hasM = perm, true
		case aclTagUser:
			p.users = append(p.users, ACLEntry{ID: uint64(e.id), Perm: perm})
		case aclTagGroup:
			p.groups = append(p.groups, ACLEntry{ID: uint64(e.id), Perm: perm})
		default:
			return nil, fmt.Errorf("%w: POSIX ACL tag %#x unknown", ErrInvalid, e.tag)
		}
	}
	byID := func(a, b ACLEntry) int { return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Perm, b.Perm)) }
	slices.SortFunc(p.users, byID)
	slices.SortFunc(p.groups, byID)
	return p, nil
}

// SetAccessFromXattr fills the access part of a from the value of a
// system.posix_acl_access xattr, as PBS does: named users and groups are
// kept, and the owning group's entry only when a mask exists (the mode's
// group bits then show the mask).
func (a *ACL) SetAccessFromXattr(value []byte) error {
	ents, err := parseACLXattr(value)
	if err != nil {
		return err
	}
	p, err := splitACL(ents)
	if err != nil {
		return err
	}
	a.Users, a.Groups, a.GroupObj = p.users, p.groups, nil
	if p.hasGroup && p.hasM {
		g := p.groupObj
		a.GroupObj = &g
	}
	return nil
}

// SetDefaultFromXattr fills the default part of a from the value of a
// system.posix_acl_default xattr.
func (a *ACL) SetDefaultFromXattr(value []byte) error {
	ents, err := parseACLXattr(value)
	if err != nil {
		return err
	}
	p, err := splitACL(ents)
	if err != nil {
		return err
	}
	a.DefaultUsers, a.DefaultGroups, a.Default = p.users, p.groups, nil
	if p.hasUser || p.hasGroup || p.hasO || p.hasM {
		pick := func(v uint64, ok bool) uint64 {
			if ok {
				return v
			}
			return ACLNoMask
		}
		a.Default = &ACLDefault{
			UserObj:  pick(p.userObj, p.hasUser),
			GroupObj: pick(p.groupObj, p.hasGroup),
			Other:    pick(p.other, p.hasO),
			Mask:     pick(p.mask, p.hasM),
		}
	}
	return nil
}

type aclBuilder struct {
	b   []byte
	err error
}

func (w *aclBuilder) add(tag uint16, perm, id uint64) {
	if perm > 7 || (id > aclUndefinedID) {
		w.err = fmt.Errorf("%w: ACL entry tag %#x perm %d id %d out of range", ErrInvalid, tag, perm, id)
		return
	}
	w.b = le.AppendUint16(w.b, tag)
	w.b = le.AppendUint16(w.b, uint16(perm))
	w.b = le.AppendUint32(w.b, uint32(id))
}

func (w *aclBuilder) named(tag uint16, ents []ACLEntry) {
	for _, e := range ents {
		w.add(tag, e.Perm, e.ID)
	}
}

// AccessXattr returns the system.posix_acl_access value for a file of
// the given mode, or nil if the access ACL is just the mode.
func (a *ACL) AccessXattr(mode uint64) ([]byte, error) {
	if len(a.Users) == 0 && len(a.Groups) == 0 && a.GroupObj == nil {
		return nil, nil
	}
	groupBits := (mode >> 3) & 7
	groupObj := groupBits
	if a.GroupObj != nil {
		groupObj = *a.GroupObj
	}
	w := &aclBuilder{b: le.AppendUint32(nil, aclXattrVersion)}
	w.add(aclTagUserObj, (mode>>6)&7, aclUndefinedID)
	w.named(aclTagUser, a.Users)
	w.add(aclTagGroupObj, groupObj, aclUndefinedID)
	w.named(aclTagGroup, a.Groups)
	w.add(aclTagMask, groupBits, aclUndefinedID)
	w.add(aclTagOther, mode&7, aclUndefinedID)
	return w.b, w.err
}

// DefaultXattr returns the system.posix_acl_default value, or nil if the
// directory has no default ACL.
func (a *ACL) DefaultXattr() ([]byte, error) {
	if a.Default == nil && len(a.DefaultUsers) == 0 && len(a.DefaultGroups) == 0 {
		return nil, nil
	}
	d := ACLDefault{UserObj: ACLNoMask, GroupObj: ACLNoMask, Other: ACLNoMask, Mask: ACLNoMask}
	if a.Default != nil {
		d = *a.Default
	}
	w := &aclBuilder{b: le.AppendUint32(nil, aclXattrVersion)}
	base := func(tag uint16, perm uint64) {
		if perm != ACLNoMask {
			w.add(tag, perm, aclUndefinedID)
		}
	}
	base(aclTagUserObj, d.UserObj)
	w.named(aclTagUser, a.DefaultUsers)
	base(aclTagGroupObj, d.GroupObj)
	w.named(aclTagGroup, a.DefaultGroups)
	base(aclTagMask, d.Mask)
	base(aclTagOther, d.Other)
	return w.b, w.err
}

// AccessText returns the access ACL of a file of the given mode in the
// text form of acl_to_text(3) with numeric ids and commas between the
// entries ("user::rw-,user:1000:r--,group::r--,mask::r--,other::r--"),
// as GNU tar and star record it; "" if the ACL is just the mode.
func (a *ACL) AccessText(mode uint64) (string, error) {
	b, err := a.AccessXattr(mode)
	if err != nil || b == nil {
		return "", err
	}
	return aclText(b)
}

// DefaultText returns the default ACL in the form of AccessText; "" if
// the directory has none.
func (a *ACL) DefaultText() (string, error) {
	b, err := a.DefaultXattr()
	if err != nil || b == nil {
		return "", err
	}
	return aclText(b)
}

func aclText(b []byte) (string, error) {
	ents, err := parseACLXattr(b)
	if err != nil {
		return "", err
	}
	out := make([]byte, 0, 16*len(ents))
	for i, e := range ents {
		if i > 0 {
			out = append(out, ',')
		}
		switch e.tag {
		case aclTagUserObj:
			out = append(out, "user::"...)
		case aclTagUser:
			out = fmt.Appendf(out, "user:%d:", e.id)
		case aclTagGroupObj:
			out = append(out, "group::"...)
		case aclTagGroup:
			out = fmt.Appendf(out, "group:%d:", e.id)
		case aclTagMask:
			out = append(out, "mask::"...)
		case aclTagOther:
			out = append(out, "other::"...)
		default:
			return "", fmt.Errorf("%w: POSIX ACL tag %#x unknown", ErrInvalid, e.tag)
		}
		for bit, c := range []byte("rwx") {
			if e.perm&(4>>bit) != 0 {
				out = append(out, c)
			} else {
				out = append(out, '-')
			}
		}
	}
	return string(out), nil
}
