package pxar

import (
	"bytes"
	"fmt"
)

// Kind is the type of an entry.
type Kind uint8

// Entry kinds. Hard links appear as KindFile (their target's content and
// metadata) with Entry.Hardlink set.
const (
	KindFile Kind = iota + 1
	KindDir
	KindSymlink
	KindDevice
	KindFIFO
	KindSocket
)

func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "directory"
	case KindSymlink:
		return "symlink"
	case KindDevice:
		return "device"
	case KindFIFO:
		return "fifo"
	case KindSocket:
		return "socket"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Entry is one decoded archive entry with all its metadata. Entries are
// immutable values; an Entry of one Accessor must not be used with
// another.
type Entry struct {
	Name     string // file name; "" for the root
	ID       uint64 // offset of its FILENAME item, of the target's for hard links; 0 for the root
	Kind     Kind
	Metadata Metadata
	Size     uint64 // content size of a regular file
	Target   string // symlink target
	Hardlink string // non-empty for a hard link: the path it records for its target
	Device   Device // device numbers of a device node

	contentOfs uint64 // file content: inline offset, or PAYLOAD item offset in the payload stream
	payloadRef bool
	dirContent uint64 // directory: first child's FILENAME (or its GOODBYE)
	goodbyeOfs uint64 // directory: its GOODBYE item
	count      uint64 // directory: number of goodbye table items
	parent     *Entry // the directory it was found in; nil for the root
	ref        Ref
}

// IsDir reports whether e is a directory.
func (e *Entry) IsDir() bool { return e.Kind == KindDir }

// PayloadRef returns where a regular file's PAYLOAD item (header
// included, HeaderSize+Size bytes) lies in the payload stream of a split
// archive; ok is false for other entries and for inline content. An
// incremental backup reuses that range of the previous payload stream.
func (e *Entry) PayloadRef() (offset uint64, ok bool) { return e.contentOfs, e.payloadRef }

// Len is the number of entries of a directory.
func (e *Entry) Len() int { return int(e.count) }

// decodeBody parses an ENTRY item at c.pos, the attribute items after it
// and the item that ends the entry (PAYLOAD, PAYLOAD_REF, SYMLINK or
// DEVICE), or stops before the next FILENAME / GOODBYE item or at the end
// of the region for directories, FIFOs and sockets.
func (a *Accessor) decodeBody(c *cursor, e *Entry) error {
	start := c.pos
	h, b, err := c.item()
	if err != nil {
		return err
	}
	switch {
	case h.typ == TypeEntry && len(b) == statSize:
		e.Metadata.Stat = decodeStat(b)
	case h.typ == TypeEntryV1 && len(b) == statV1Size:
		e.Metadata.Stat = decodeStatV1(b)
	default:
		return corrupt(c.s.name, start, "expected ENTRY item, found %s of %d bytes", typeName(h.typ), h.fullSize)
	}
	if e.Metadata.Stat.Mtime.Nanos >= 1e9 {
		return corrupt(c.s.name, start, "mtime nanoseconds %d out of range", e.Metadata.Stat.Mtime.Nanos)
	}
	for {
		if c.pos-start > maxEntryMeta {
			return corrupt(c.s.name, start, "entry metadata larger than %d bytes", maxEntryMeta)
		}
		if c.pos == c.limit {
			return finishSpecial(c, e)
		}
		h, err := c.peekHeader()
		if err != nil {
			return err
		}
		if h.typ == TypeFilename || h.typ == TypeGoodbye {
			return finishSpecial(c, e)
		}
		done, err := a.decodeItem(c, h, e)
		if done || err != nil {
			return err
		}
	}
}

// finishSpecial ends an entry that has no content item.
func finishSpecial(c *cursor, e *Entry) error {
	st := &e.Metadata.Stat
	switch {
	case st.IsDir():
		e.Kind = KindDir
	case st.IsFIFO():
		e.Kind = KindFIFO
	case st.IsSocket():
		e.Kind = KindSocket
	default:
		return corrupt(c.s.name, c.pos, "entry of mode %o ends without content", st.Mode)
	}
	return nil
}

// decodeItem consumes one item after ENTRY; done is true when it ended the
// entry.
func (a *Accessor) decodeItem(c *cursor, h header, e *Entry) (done bool, err error) {
	at := c.pos
	m := &e.Metadata
	bad := func(format string, args ...any) (bool, error) {
		return false, corrupt(c.s.name, at, format, args...)
	}
	switch h.typ {
	case TypeXattr:
		_, b, err := c.item()
		if err != nil {
			return false, err
		}
		i := bytes.IndexByte(b, 0)
		if i <= 0 {
			return bad("xattr without name or NUL separator")
		}
		m.Xattrs = append(m.Xattrs, Xattr{Name: bytes.Clone(b[:i]), Value: bytes.Clone(b[i+1:])})
	case TypeACLUser, TypeACLGroup, TypeACLDefaultUser, TypeACLDefaultGroup:
		_, b, err := c.fixedItem(aclEntrySize)
		if err != nil {
			return false, err
		}
		ent := ACLEntry{ID: le.Uint64(b), Perm: le.Uint64(b[8:])}
		switch h.typ {
		case TypeACLUser:
			m.ACL.Users = append(m.ACL.Users, ent)
		case TypeACLGroup:
			m.ACL.Groups = append(m.ACL.Groups, ent)
		case TypeACLDefaultUser:
			m.ACL.DefaultUsers = append(m.ACL.DefaultUsers, ent)
		default:
			m.ACL.DefaultGroups = append(m.ACL.DefaultGroups, ent)
		}
	case TypeACLGroupObj, TypeQuotaProjID:
		_, b, err := c.fixedItem(8)
		if err != nil {
			return false, err
		}
		v := le.Uint64(b)
		p := &m.ACL.GroupObj
		if h.typ == TypeQuotaProjID {
			p = &m.QuotaProjectID
		}
		if *p != nil {
			return bad("second %s item", typeName(h.typ))
		}
		*p = &v
	case TypeACLDefault:
		_, b, err := c.fixedItem(aclDefaultSize)
		if err != nil {
			return false, err
		}
		if m.ACL.Default != nil {
			return bad("second ACL_DEFAULT item")
		}
		m.ACL.Default = &ACLDefault{UserObj: le.Uint64(b), GroupObj: le.Uint64(b[8:]), Other: le.Uint64(b[16:]), Mask: le.Uint64(b[24:])}
	case TypeFCaps:
		_, b, err := c.item()
		if err != nil {
			return false, err
		}
		if m.FCaps != nil {
			return bad("second FCAPS item")
		}
		m.FCaps = append([]byte{}, b...)
	default:
		return true, a.decodeContent(c, h, e)
	}
	return false, nil
}

// decodeContent consumes the item that ends a symlink, device or file.
func (a *Accessor) decodeContent(c *cursor, h header, e *Entry) error {
	at := c.pos
	st := &e.Metadata.Stat
	bad := func(format string, args ...any) error { return corrupt(c.s.name, at, format, args...) }
	switch h.typ {
	case TypeSymlink:
		_, b, err := c.item()
		if err != nil {
			return err
		}
		if !st.IsSymlink() {
			return bad("SYMLINK item in an entry of mode %o", st.Mode)
		}
		if len(b) < 2 || b[len(b)-1] != 0 || bytes.IndexByte(b[:len(b)-1], 0) >= 0 {
			return bad("symlink target not a NUL-terminated path")
		}
		e.Kind, e.Target = KindSymlink, string(b[:len(b)-1])
	case TypeDevice:
		_, b, err := c.fixedItem(deviceSize)
		if err != nil {
			return err
		}
		if !st.IsDevice() {
			return bad("DEVICE item in an entry of mode %o", st.Mode)
		}
		e.Kind, e.Device = KindDevice, Device{Major: le.Uint64(b), Minor: le.Uint64(b[8:])}
	case TypePayload:
		if !st.IsRegular() {
			return bad("PAYLOAD item in an entry of mode %o", st.Mode)
		}
		if err := c.skip(h.fullSize); err != nil {
			return err
		}
		e.Kind, e.Size, e.contentOfs = KindFile, h.contentSize(), at+HeaderSize
	case TypePayloadRef:
		_, b, err := c.fixedItem(payloadRefSize)
		if err != nil {
			return err
		}
		if !st.IsRegular() {
			return bad("PAYLOAD_REF item in an entry of mode %o", st.Mode)
		}
		off, size := le.Uint64(b), le.Uint64(b[8:])
		if off > maxFileSize || size > maxFileSize {
			return bad("payload reference offset %d size %d out of range", off, size)
		}
		if p := a.payload; p != nil && (off > p.size || HeaderSize+size > p.size-off) {
			return bad("payload reference [%d, +%d) outside the payload stream of %d bytes", off, HeaderSize+size, p.size)
		}
		if a.payload == nil && a.version != formatVersion2 {
			return bad("payload reference in a single-stream archive")
		}
		e.Kind, e.Size, e.contentOfs, e.payloadRef = KindFile, size, off, true
	default:
		return bad("unexpected %s item in an entry", typeName(h.typ))
	}
	return nil
}
