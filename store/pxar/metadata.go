package pxar

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// Timestamp is pxar's StatxTimestamp: seconds since the epoch and
// nanoseconds (0 ≤ Nanos < 1e9) after them; times before 1970 have
// negative Secs and positive Nanos.
type Timestamp struct {
	Secs  int64
	Nanos uint32
}

// Stat is the ENTRY item.
type Stat struct {
	Mode  uint64 // file type and permission bits (Mode* constants)
	Flags uint64 // PBS feature flags (chattr / FAT attributes)
	UID   uint32
	GID   uint32
	Mtime Timestamp
}

// FileType returns the type bits of the mode.
func (s Stat) FileType() uint64 { return s.Mode & ModeIFMT }

// IsDir, IsRegular … tell the file type.
func (s Stat) IsDir() bool     { return s.FileType() == ModeIFDIR }
func (s Stat) IsRegular() bool { return s.FileType() == ModeIFREG }
func (s Stat) IsSymlink() bool { return s.FileType() == ModeIFLNK }
func (s Stat) IsDevice() bool  { t := s.FileType(); return t == ModeIFCHR || t == ModeIFBLK }
func (s Stat) IsFIFO() bool    { return s.FileType() == ModeIFIFO }
func (s Stat) IsSocket() bool  { return s.FileType() == ModeIFSOCK }

// Xattr is one extended attribute (XATTR item: name NUL value).
type Xattr struct {
	Name  []byte
	Value []byte
}

// ACLEntry is a named user or group entry of a POSIX ACL.
type ACLEntry struct {
	ID   uint64 // uid or gid
	Perm uint64 // ACLRead | ACLWrite | ACLExecute
}

// ACL permission bits and the "not set" placeholder of ACLDefault.
const (
	ACLRead    uint64 = 4
	ACLWrite   uint64 = 2
	ACLExecute uint64 = 1
	ACLNoMask  uint64 = 1<<64 - 1
)

// ACLDefault holds the base entries of a directory's default ACL; a field
// is ACLNoMask when the default ACL lacks that entry.
type ACLDefault struct {
	UserObj  uint64
	GroupObj uint64
	Other    uint64
	Mask     uint64
}

// ACL is a POSIX access ACL and (for directories) default ACL as pxar
// stores them: the owner, owning group and other entries of the access
// ACL live in the mode; GroupObj is only kept when a mask exists (the
// mode's group bits then hold the mask).
type ACL struct {
	Users         []ACLEntry
	Groups        []ACLEntry
	GroupObj      *uint64
	Default       *ACLDefault
	DefaultUsers  []ACLEntry
	DefaultGroups []ACLEntry
}

// IsEmpty reports whether the ACL has no entries at all.
func (a *ACL) IsEmpty() bool {
	return len(a.Users) == 0 && len(a.Groups) == 0 && a.GroupObj == nil && a.Default == nil &&
		len(a.DefaultUsers) == 0 && len(a.DefaultGroups) == 0
}

// Metadata is everything pxar records about an entry besides its name
// and content.
type Metadata struct {
	Stat           Stat
	Xattrs         []Xattr
	ACL            ACL
	FCaps          []byte  // security.capability value; nil if none
	QuotaProjectID *uint64 // nil if none
}

// Equal reports whether m and o describe the same metadata (nil and empty
// lists are equal), as PBS compares entries for change detection.
func (m *Metadata) Equal(o *Metadata) bool {
	if m.Stat != o.Stat || !bytes.Equal(m.FCaps, o.FCaps) || (m.FCaps == nil) != (o.FCaps == nil) {
		return false
	}
	if !equalPtr(m.QuotaProjectID, o.QuotaProjectID) || !equalPtr(m.ACL.GroupObj, o.ACL.GroupObj) ||
		!equalPtr(m.ACL.Default, o.ACL.Default) {
		return false
	}
	if !slices.Equal(m.ACL.Users, o.ACL.Users) || !slices.Equal(m.ACL.Groups, o.ACL.Groups) ||
		!slices.Equal(m.ACL.DefaultUsers, o.ACL.DefaultUsers) ||
		!slices.Equal(m.ACL.DefaultGroups, o.ACL.DefaultGroups) {
		return false
	}
	return slices.EqualFunc(m.Xattrs, o.Xattrs, func(a, b Xattr) bool {
		return bytes.Equal(a.Name, b.Name) && bytes.Equal(a.Value, b.Value)
	})
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Device is a device node's major and minor number.
type Device struct {
	Major uint64
	Minor uint64
}

// DeviceFromDev splits a Linux dev_t (glibc's makedev layout).
func DeviceFromDev(dev uint64) Device {
	return Device{
		Major: (dev>>8)&0xfff | (dev>>32)&0xfffff000,
		Minor: dev&0xff | (dev>>12)&0xffffff00,
	}
}

// Dev joins major and minor into a Linux dev_t.
func (d Device) Dev() uint64 {
	return (d.Major&0xfff)<<8 | (d.Major&0xfffff000)<<32 | d.Minor&0xff | (d.Minor&0xffffff00)<<12
}

var le = binary.LittleEndian

func encodeStat(b []byte, s *Stat) {
	le.PutUint64(b[0:], s.Mode)
	le.PutUint64(b[8:], s.Flags)
	le.PutUint32(b[16:], s.UID)
	le.PutUint32(b[20:], s.GID)
	le.PutUint64(b[24:], uint64(s.Mtime.Secs))
	le.PutUint32(b[32:], s.Mtime.Nanos)
	le.PutUint32(b[36:], 0)
}

func decodeStat(b []byte) Stat {
	return Stat{
		Mode:  le.Uint64(b[0:]),
		Flags: le.Uint64(b[8:]),
		UID:   le.Uint32(b[16:]),
		GID:   le.Uint32(b[20:]),
		Mtime: Timestamp{Secs: int64(le.Uint64(b[24:])), Nanos: le.Uint32(b[32:])},
	}
}

// decodeStatV1 reads the old ENTRY layout, whose mtime is nanoseconds
// since the epoch.
func decodeStatV1(b []byte) Stat {
	ns := le.Uint64(b[24:])
	return Stat{
		Mode:  le.Uint64(b[0:]),
		Flags: le.Uint64(b[8:]),
		UID:   le.Uint32(b[16:]),
		GID:   le.Uint32(b[20:]),
		Mtime: Timestamp{Secs: int64(ns / 1e9), Nanos: uint32(ns % 1e9)},
	}
}

// DecodeEntry decodes the content of an ENTRY item (typ TypeEntry) or of
// an old ENTRY_V1 item (TypeEntryV1); ok is false for another type or a
// content of the wrong size.
func DecodeEntry(typ uint64, content []byte) (st Stat, ok bool) {
	switch {
	case typ == TypeEntry && len(content) == statSize:
		return decodeStat(content), true
	case typ == TypeEntryV1 && len(content) == statV1Size:
		return decodeStatV1(content), true
	}
	return Stat{}, false
}

// appendItem appends a header and content.
func appendItem(b []byte, typ uint64, content ...[]byte) []byte {
	var n uint64
	for _, c := range content {
		n += uint64(len(c))
	}
	var h [HeaderSize]byte
	putHeader(h[:], typ, n)
	b = append(b, h[:]...)
	for _, c := range content {
		b = append(b, c...)
	}
	return b
}

func appendU64Item(b []byte, typ uint64, vals ...uint64) []byte {
	var h [HeaderSize]byte
	putHeader(h[:], typ, uint64(8*len(vals)))
	b = append(b, h[:]...)
	for _, v := range vals {
		b = le.AppendUint64(b, v)
	}
	return b
}

// appendMetadata appends the ENTRY item and the attribute items that
// follow it, in pxar's order.
func appendMetadata(b []byte, m *Metadata) []byte {
	var st [statSize]byte
	encodeStat(st[:], &m.Stat)
	b = appendItem(b, TypeEntry, st[:])
	for _, x := range m.Xattrs {
		b = appendItem(b, TypeXattr, x.Name, []byte{0}, x.Value)
	}
	a := &m.ACL
	for _, u := range a.Users {
		b = appendU64Item(b, TypeACLUser, u.ID, u.Perm)
	}
	for _, g := range a.Groups {
		b = appendU64Item(b, TypeACLGroup, g.ID, g.Perm)
	}
	if a.GroupObj != nil {
		b = appendU64Item(b, TypeACLGroupObj, *a.GroupObj)
	}
	if d := a.Default; d != nil {
		b = appendU64Item(b, TypeACLDefault, d.UserObj, d.GroupObj, d.Other, d.Mask)
	}
	for _, u := range a.DefaultUsers {
		b = appendU64Item(b, TypeACLDefaultUser, u.ID, u.Perm)
	}
	for _, g := range a.DefaultGroups {
		b = appendU64Item(b, TypeACLDefaultGroup, g.ID, g.Perm)
	}
	if m.FCaps != nil {
		b = appendItem(b, TypeFCaps, m.FCaps)
	}
	if m.QuotaProjectID != nil {
		b = appendU64Item(b, TypeQuotaProjID, *m.QuotaProjectID)
	}
	return b
}

// checkMetadata rejects metadata the format cannot hold.
func checkMetadata(m *Metadata) error {
	if m.Stat.Mtime.Nanos >= 1e9 {
		return errorf("mtime nanoseconds %d out of range", m.Stat.Mtime.Nanos)
	}
	for _, x := range m.Xattrs {
		if len(x.Name) == 0 || bytes.IndexByte(x.Name, 0) >= 0 {
			return errorf("invalid xattr name %q", x.Name)
		}
		if len(x.Name)+1+len(x.Value) > MaxXattrLen {
			return errorf("xattr %q too large (%d bytes)", x.Name, len(x.Value))
		}
	}
	if len(m.FCaps) > MaxXattrLen {
		return errorf("file capabilities too large (%d bytes)", len(m.FCaps))
	}
	return nil
}
