package pxar

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
)

// Item types: SipHash-2-4 (keys PXARHashKey1/2) of "__PROXMOX_FORMAT_…__"
// strings, as in pxar's src/format/mod.rs.
const (
	TypeFormatVersion      uint64 = 0x730f6c75df16a40d
	TypeEntry              uint64 = 0xd5956474e588acef
	TypeEntryV1            uint64 = 0x11da850a1c1cceff
	TypePrelude            uint64 = 0xe309d79d9f7b771b
	TypeFilename           uint64 = 0x16701121063917b3
	TypeSymlink            uint64 = 0x27f971e7dbf5dc5f
	TypeDevice             uint64 = 0x9fc9e906586d5ce9
	TypeXattr              uint64 = 0x0dab0229b57dcd03
	TypeACLUser            uint64 = 0x2ce8540a457d55b8
	TypeACLGroup           uint64 = 0x136e3eceb04c03ab
	TypeACLGroupObj        uint64 = 0x10868031e9582876
	TypeACLDefault         uint64 = 0xbbbb13415a6896f5
	TypeACLDefaultUser     uint64 = 0xc89357b40532cd1f
	TypeACLDefaultGroup    uint64 = 0xf90a8a5816038ffe
	TypeFCaps              uint64 = 0x2da9dd9db5f7fb67
	TypeQuotaProjID        uint64 = 0xe07540e82f7d1cbb
	TypeHardlink           uint64 = 0x51269c8422bd7275
	TypePayload            uint64 = 0x28147a1b0b7c1a25
	TypePayloadRef         uint64 = 0x419d3d6bc4ba977e
	TypeGoodbye            uint64 = 0x2fec4fa642d5731d
	GoodbyeTailMarker      uint64 = 0xef5eed5b753e1555
	TypePayloadStartMarker uint64 = 0x834c68c2194a4ed2
	TypePayloadTailMarker  uint64 = 0x6c72b78b984c81b5
)

// SipHash-2-4 keys of file name hashes: the first 32 hex digits of
// sha1("PROXMOX ARCHIVE FORMAT").
const (
	PXARHashKey1 uint64 = 0x83ac3f1cfbb450db
	PXARHashKey2 uint64 = 0xaa4f1b6879369fbd
)

// Sizes of the fixed-size items, in bytes.
const (
	HeaderSize      = 16 // htype u64, full_size u64 (header included)
	statSize        = 40 // mode, flags, uid, gid, mtime{secs i64, nanos u32, pad u32}
	statV1Size      = 32 // mode, flags, uid, gid, mtime u64 nanoseconds
	GoodbyeItemSize = 24 // hash, offset, size
	// EntrySize and EntryV1Size are the content sizes of ENTRY and
	// ENTRY_V1 items (see DecodeEntry).
	EntrySize      = statSize
	EntryV1Size    = statV1Size
	payloadRefSize = 16 // offset, size
	// PayloadRefItemSize is the full size of a PAYLOAD_REF item: header,
	// offset u64, size u64. It is the last item of a file entry that
	// AddFileRef wrote.
	PayloadRefItemSize = HeaderSize + payloadRefSize
	deviceSize         = 16 // major, minor
	aclEntrySize       = 16 // id, permissions
	aclDefaultSize     = 32 // user_obj, group_obj, other, mask
)

// Limits of pxar's util.rs.
const (
	MaxPathLen     = 4096          // symlink and hard link targets
	MaxFilenameLen = MaxPathLen    // one file name
	MaxXattrLen    = 255 + 64*1024 // xattr name + NUL + value
	maxEntryMeta   = 64 << 20      // all items of one entry before its end
)

// File type bits of Stat.Mode (fixed by the format, equal to Linux's).
const (
	ModeIFMT   uint64 = 0o170000
	ModeIFSOCK uint64 = 0o140000
	ModeIFLNK  uint64 = 0o120000
	ModeIFREG  uint64 = 0o100000
	ModeIFBLK  uint64 = 0o060000
	ModeIFDIR  uint64 = 0o040000
	ModeIFCHR  uint64 = 0o020000
	ModeIFIFO  uint64 = 0o010000
)

// Errors. Decoding errors wrap ErrCorrupt; lookups of missing names wrap
// ErrNotFound (which also matches fs.ErrNotExist).
var (
	ErrCorrupt     = errors.New("pxar: corrupt archive")
	ErrNotFound    = fmt.Errorf("pxar: entry not found: %w", fs.ErrNotExist)
	ErrNotDir      = errors.New("pxar: not a directory")
	ErrNotFile     = errors.New("pxar: not a regular file")
	ErrInvalidName = errors.New("pxar: invalid file name")
	ErrOrder       = errors.New("pxar: entries not in sorted name order")
	ErrState       = errors.New("pxar: encoder misuse")
	ErrNoPayload   = errors.New("pxar: archive has no payload stream")
	ErrInvalid     = errors.New("pxar: invalid entry")
	ErrDuplicate   = errors.New("pxar: duplicate name in a directory")
)

// errorf returns an error wrapping ErrInvalid.
func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// CorruptError says where in which stream an archive is bad.
type CorruptError struct {
	Stream string // "metadata" or "payload"
	Offset uint64
	Msg    string
	Err    error // an optional more specific cause
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("pxar: corrupt %s stream at offset %d: %s", e.Stream, e.Offset, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap makes errors.Is(err, ErrCorrupt) and the cause match.
func (e *CorruptError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrCorrupt, e.Err}
	}
	return []error{ErrCorrupt}
}

func corrupt(stream string, off uint64, format string, args ...any) error {
	return &CorruptError{Stream: stream, Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// header is the 16-byte item header.
type header struct {
	typ      uint64
	fullSize uint64
}

func (h header) contentSize() uint64 { return h.fullSize - HeaderSize }

func putHeader(b []byte, typ, contentSize uint64) {
	binary.LittleEndian.PutUint64(b[0:], typ)
	binary.LittleEndian.PutUint64(b[8:], contentSize+HeaderSize)
}

func parseHeader(b []byte) header {
	return header{typ: binary.LittleEndian.Uint64(b[0:]), fullSize: binary.LittleEndian.Uint64(b[8:])}
}

// maxContent is the largest content size pxar accepts for an item type.
func maxContent(typ uint64) uint64 {
	switch typ {
	case TypeFilename, TypeSymlink:
		return MaxPathLen + 1
	case TypeHardlink:
		return MaxPathLen + 1 + 8
	case TypeDevice:
		return deviceSize
	case TypeXattr, TypeFCaps:
		return MaxXattrLen
	case TypeACLUser, TypeACLDefaultUser, TypeACLGroup, TypeACLDefaultGroup:
		return aclEntrySize
	case TypeACLDefault:
		return aclDefaultSize
	case TypeACLGroupObj, TypeQuotaProjID, TypeFormatVersion:
		return 8
	case TypePrelude:
		return maxEntryMeta
	case TypeEntry:
		return statSize
	case TypeEntryV1:
		return statV1Size
	case TypePayloadRef:
		return payloadRefSize
	case TypePayloadTailMarker, TypePayloadStartMarker:
		return 0
	}
	return 1<<64 - 1 - HeaderSize
}

// checkHeader validates an item header read at off.
func checkHeader(stream string, off uint64, h header) error {
	if h.fullSize < HeaderSize {
		return corrupt(stream, off, "item %s: size %d smaller than its header", typeName(h.typ), h.fullSize)
	}
	if h.contentSize() > maxContent(h.typ) {
		return corrupt(stream, off, "item %s: content size %d exceeds %d", typeName(h.typ), h.contentSize(), maxContent(h.typ))
	}
	return nil
}

func typeName(t uint64) string {
	switch t {
	case TypeFormatVersion:
		return "FORMAT_VERSION"
	case TypeEntry:
		return "ENTRY"
	case TypeEntryV1:
		return "ENTRY_V1"
	case TypePrelude:
		return "PRELUDE"
	case TypeFilename:
		return "FILENAME"
	case TypeSymlink:
		return "SYMLINK"
	case TypeDevice:
		return "DEVICE"
	case TypeXattr:
		return "XATTR"
	case TypeACLUser:
		return "ACL_USER"
	case TypeACLGroup:
		return "ACL_GROUP"
	case TypeACLGroupObj:
		return "ACL_GROUP_OBJ"
	case TypeACLDefault:
		return "ACL_DEFAULT"
	case TypeACLDefaultUser:
		return "ACL_DEFAULT_USER"
	case TypeACLDefaultGroup:
		return "ACL_DEFAULT_GROUP"
	case TypeFCaps:
		return "FCAPS"
	case TypeQuotaProjID:
		return "QUOTA_PROJID"
	case TypeHardlink:
		return "HARDLINK"
	case TypePayload:
		return "PAYLOAD"
	case TypePayloadRef:
		return "PAYLOAD_REF"
	case TypeGoodbye:
		return "GOODBYE"
	case TypePayloadStartMarker:
		return "PAYLOAD_START_MARKER"
	case TypePayloadTailMarker:
		return "PAYLOAD_TAIL_MARKER"
	}
	return fmt.Sprintf("unknown(%#x)", t)
}

// ValidName reports whether name may be a pxar file name: not empty, not
// "." or "..", without '/' or NUL, at most MaxFilenameLen bytes.
func ValidName(name string) bool {
	if name == "" || name == "." || name == ".." || len(name) > MaxFilenameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == '/' || name[i] == 0 {
			return false
		}
	}
	return true
}

func checkName(name string) error {
	if !ValidName(name) {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}
