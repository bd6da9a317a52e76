package pbscheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"time"
)

// pxar item types (proxmox/pxar src/format/mod.rs).
const (
	typeFormatVersion   uint64 = 0x730f6c75df16a40d
	typeEntry           uint64 = 0xd5956474e588acef
	typeEntryV1         uint64 = 0x11da850a1c1cceff
	typePrelude         uint64 = 0xe309d79d9f7b771b
	typeFilename        uint64 = 0x16701121063917b3
	typeSymlink         uint64 = 0x27f971e7dbf5dc5f
	typeDevice          uint64 = 0x9fc9e906586d5ce9
	typeXattr           uint64 = 0x0dab0229b57dcd03
	typeACLUser         uint64 = 0x2ce8540a457d55b8
	typeACLGroup        uint64 = 0x136e3eceb04c03ab
	typeACLGroupObj     uint64 = 0x10868031e9582876
	typeACLDefault      uint64 = 0xbbbb13415a6896f5
	typeACLDefaultUser  uint64 = 0xc89357b40532cd1f
	typeACLDefaultGroup uint64 = 0xf90a8a5816038ffe
	typeFcaps           uint64 = 0x2da9dd9db5f7fb67
	typeQuotaProjID     uint64 = 0xe07540e82f7d1cbb
	typeHardlink        uint64 = 0x51269c8422bd7275
	typePayload         uint64 = 0x28147a1b0b7c1a25
	typePayloadRef      uint64 = 0x419d3d6bc4ba977e
	typeGoodbye         uint64 = 0x2fec4fa642d5731d
	goodbyeTailMarker   uint64 = 0xef5eed5b753e1555
	payloadStartMarker  uint64 = 0x834c68c2194a4ed2
	payloadTailMarker   uint64 = 0x6c72b78b984c81b5
)

// File type bits of pxar's mode (src/format/mod.rs, mod mode).
const (
	modeIFMT   = 0o170000
	modeIFSOCK = 0o140000
	modeIFLNK  = 0o120000
	modeIFREG  = 0o100000
	modeIFBLK  = 0o060000
	modeIFDIR  = 0o040000
	modeIFCHR  = 0o020000
	modeIFIFO  = 0o010000
)

const (
	headerSize  = 16 // htype u64 | full_size u64 (including the header)
	goodbyeItem = 24 // hash u64 | offset u64 | size u64
	maxPathLen  = 4096
	maxXattrLen = 255 + 64*1024
	statSize    = 40 // mode u64, flags u64, uid u32, gid u32, mtime {secs i64, nanos u32, pad u32}
	statV1Size  = 32
)

var typeNames = map[uint64]string{
	typeFormatVersion: "FORMAT_VERSION", typeEntry: "ENTRY", typeEntryV1: "ENTRY_V1",
	typePrelude: "PRELUDE", typeFilename: "FILENAME", typeSymlink: "SYMLINK", typeDevice: "DEVICE",
	typeXattr: "XATTR", typeACLUser: "ACL_USER", typeACLGroup: "ACL_GROUP",
	typeACLGroupObj: "ACL_GROUP_OBJ", typeACLDefault: "ACL_DEFAULT",
	typeACLDefaultUser: "ACL_DEFAULT_USER", typeACLDefaultGroup: "ACL_DEFAULT_GROUP",
	typeFcaps: "FCAPS", typeQuotaProjID: "QUOTA_PROJID", typeHardlink: "HARDLINK",
	typePayload: "PAYLOAD", typePayloadRef: "PAYLOAD_REF", typeGoodbye: "GOODBYE",
	payloadStartMarker: "PAYLOAD_START_MARKER", payloadTailMarker: "PAYLOAD_TAIL_MARKER",
}

func typeName(t uint64) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("unknown type %#x", t)
}

// maxContent is pxar's Header::max_content_size: the largest content an
// item of the type may have.
func maxContent(t uint64) uint64 {
	switch t {
	case typeFilename, typeSymlink:
		return maxPathLen + 1
	case typeHardlink:
		return maxPathLen + 1 + 8
	case typeDevice, typeACLUser, typeACLDefaultUser, typeACLGroup, typeACLDefaultGroup:
		return 16
	case typeXattr, typeFcaps:
		return maxXattrLen
	case typeACLDefault:
		return 32
	case typeACLGroupObj, typeQuotaProjID:
		return 8
	case typeEntry:
		return statSize
	case typePayloadRef, payloadTailMarker:
		return 16
	}
	return ^uint64(0) - headerSize
}

// Entry is one entry of a decoded archive.
type Entry struct {
	Path      string // from the archive's root, "/"-separated; "" is the root
	Mode      uint64 // pxar's mode: file type bits and permissions (0 for hard links)
	Flags     uint64
	UID, GID  uint32
	Mtime     time.Time
	Size      uint64   // regular files: content size
	SHA256    [32]byte // regular files: SHA-256 of the content
	Payload   uint64   // regular files: PAYLOAD_REF offset in the payload stream
	Symlink   string   // symlinks: the target
	Hardlink  string   // hard links: the target's path
	Device    [2]uint64
	Xattrs    []string // name=value, in stream order (pxar's encoder sorts them by name)
	ACLs      int
	Offset    uint64 // of the entry's FILENAME item in the metadata stream (0: the root)
	IsRoot    bool
	EndOffset uint64
}

// Type is the entry's file type bits, or 0 for a hard link.
func (e *Entry) Type() uint64 { return e.Mode & modeIFMT }

// IsDir, IsRegular and IsSymlink tell the entry's kind.
func (e *Entry) IsDir() bool     { return e.Hardlink == "" && e.Type() == modeIFDIR }
func (e *Entry) IsRegular() bool { return e.Hardlink == "" && e.Type() == modeIFREG }
func (e *Entry) IsSymlink() bool { return e.Hardlink == "" && e.Type() == modeIFLNK }

// Archive is what DecodeSplit found.
type Archive struct {
	Entries      []Entry // in stream order
	MetadataSize uint64
	PayloadSize  uint64
	PayloadRefs  int
	// Unreferenced is the number of payload bytes no PAYLOAD_REF covers
	// (neither the start marker nor the tail marker): what an incremental
	// backup kept only to reuse whole chunks.
	Unreferenced uint64
	// RootTailOffset is the root goodbye tail's offset field: pxar's
	// encoder writes the goodbye table's own offset (pointing at the
	// stream's start, before FORMAT_VERSION); the ENTRY's offset reads
	// too.
	RootTailOffset uint64
}

// Find returns the entry with the path, or nil.
func (a *Archive) Find(path string) *Entry {
	for i := range a.Entries {
		if a.Entries[i].Path == path {
			return &a.Entries[i]
		}
	}
	return nil
}

// DecodeOptions tune DecodeSplit.
type DecodeOptions struct {
	// File, if not nil, is called with each regular file's content as
	// it is read from the payload stream (r ends after size bytes; what
	// File leaves unread is read after it returns).
	File func(path string, size uint64, r io.Reader) error
}

type header struct {
	typ, full, off uint64
}

func (h header) content() uint64 { return h.full - headerSize }

func (h header) String() string {
	return fmt.Sprintf("%s item at metadata offset %d", typeName(h.typ), h.off)
}

// decoder follows pxar's sequential decoder (src/decoder/mod.rs) over a
// split archive: the metadata stream front to back, the payload stream
// forward only, with payloadConsumed counted as pxar counts it.
type decoder struct {
	meta, pay *posReader
	opt       DecodeOptions
	arch      *Archive
	peeked    *header
	consumed  uint64
	files     map[uint64]int // FILENAME offset of a regular file -> index in arch.Entries
}

// DecodeSplit decodes a split pxar archive (format version 2): the
// metadata stream as pxar's sequential decoder does (FORMAT_VERSION,
// optional PRELUDE, the root ENTRY, then each directory's FILENAME
// items and entries and its GOODBYE table), reading the payload stream
// forward only: a PAYLOAD_REF whose offset is below the payload bytes
// already consumed fails as pxar's decoder fails ("unexpected offset …
// smaller than already consumed payload"), the bytes at the offset must
// be a PAYLOAD header of the file's size, and the content is read
// (SHA-256, DecodeOptions.File). Beyond the decoder it checks what
// pxar's encoder guarantees and its accessor relies on: goodbye tables
// (SipHash-2-4 of each name, binary search tree order, offsets and
// sizes of each entry, the tail), names in byte order, hard links to
// earlier regular files by path and offset, item sizes, the payload
// stream's start and tail markers, nothing after the root's GOODBYE.
func DecodeSplit(meta, payload io.Reader, opt DecodeOptions) (*Archive, error) {
	d := &decoder{
		meta: newPosReader("metadata", meta),
		pay:  newPosReader("payload", payload),
		opt:  opt,
		arch: &Archive{},
	}
	d.files = map[uint64]int{}
	err := d.archive()
	d.arch.MetadataSize = d.meta.pos
	d.arch.PayloadSize = d.pay.pos
	return d.arch, err
}

func (d *decoder) archive() error {
	var b [headerSize]byte
	if err := d.pay.full(b[:]); err != nil {
		return err
	}
	if t, full := le64(b[:]), le64(b[8:]); t != payloadStartMarker || full != headerSize {
		return fmt.Errorf("payload stream: starts with %s of size %d, not PAYLOAD_START_MARKER of size 16", typeName(t), full)
	}
	d.consumed = headerSize

	h, err := d.next()
	if err != nil {
		return err
	}
	if h.typ != typeFormatVersion || h.content() != 8 {
		return fmt.Errorf("metadata stream: %s of %d bytes, not FORMAT_VERSION: a split archive is version 2", h, h.content())
	}
	v, err := d.meta.bytes(8)
	if err != nil {
		return err
	}
	if le64(v) != 2 {
		return fmt.Errorf("metadata stream: format version %d, not 2", le64(v))
	}
	if h, err = d.next(); err != nil {
		return err
	}
	if h.typ == typePrelude {
		if err := d.meta.skip(h.content()); err != nil {
			return err
		}
	} else {
		d.peeked = &h
	}
	if err := d.entry("", 0, true); err != nil {
		return err
	}
	// pxar's decoder stops after the root's goodbye table; its encoder
	// writes nothing after it.
	if n, _, err := d.meta.rest(); err != nil {
		return err
	} else if n != 0 {
		return fmt.Errorf("metadata stream: %d bytes after the root directory's GOODBYE", n)
	}
	n, last, err := d.pay.rest()
	if err != nil {
		return err
	}
	if n < headerSize || le64(last) != payloadTailMarker || le64(last[8:]) != headerSize {
		return fmt.Errorf("payload stream: does not end in a PAYLOAD_TAIL_MARKER header (as pxar's encoder writes at close)")
	}
	d.arch.Unreferenced += n - headerSize
	return nil
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// next reads the next item header of the metadata stream and checks its
// size as pxar's check_header_size does.
func (d *decoder) next() (header, error) {
	if h := d.peeked; h != nil {
		d.peeked = nil
		return *h, nil
	}
	off := d.meta.pos
	var b [headerSize]byte
	if err := d.meta.full(b[:]); err != nil {
		return header{}, err
	}
	h := header{typ: le64(b[:]), full: le64(b[8:]), off: off}
	if h.full < headerSize {
		return h, fmt.Errorf("%s: size %d is smaller than the header", h, h.full)
	}
	if h.content() > maxContent(h.typ) {
		return h, fmt.Errorf("%s: content of %d bytes, more than pxar allows (%d)", h, h.content(), maxContent(h.typ))
	}
	return h, nil
}

// exact reads the content of an item whose size pxar fixes.
func (d *decoder) exact(h header, n uint64, path string) ([]byte, error) {
	if h.content() != n {
		return nil, fmt.Errorf("%s: %s: content of %d bytes, not %d", pathName(path), h, h.content(), n)
	}
	return d.meta.bytes(n)
}

func pathName(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// entry decodes the entry whose ENTRY (or HARDLINK) item comes next;
// fnOff is the offset of its FILENAME item.
func (d *decoder) entry(path string, fnOff uint64, root bool) error {
	h, err := d.next()
	if err != nil {
		return err
	}
	e := Entry{Path: path, Offset: fnOff, IsRoot: root}
	switch h.typ {
	case typeHardlink:
		if root {
			return fmt.Errorf("%s: the root is a hard link", h)
		}
		return d.hardlink(h, e)
	case typeEntry, typeEntryV1:
	default:
		return fmt.Errorf("%s: %s, expected ENTRY", pathName(path), h)
	}
	entryOff := h.off
	if h.typ == typeEntry {
		b, err := d.exact(h, statSize, path)
		if err != nil {
			return err
		}
		e.Mode, e.Flags = le64(b), le64(b[8:])
		e.UID, e.GID = binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:])
		nanos := binary.LittleEndian.Uint32(b[32:])
		if nanos >= 1e9 {
			return fmt.Errorf("%s: %s: mtime nanoseconds %d", pathName(path), h, nanos)
		}
		e.Mtime = time.Unix(int64(le64(b[24:])), int64(nanos))
	} else {
		b, err := d.exact(h, statV1Size, path)
		if err != nil {
			return err
		}
		e.Mode, e.Flags = le64(b), le64(b[8:])
		e.UID, e.GID = binary.LittleEndian.Uint32(b[16:]), binary.LittleEndian.Uint32(b[20:])
		e.Mtime = time.Unix(0, int64(le64(b[24:])))
	}
	if root && e.Type() != modeIFDIR {
		return fmt.Errorf("%s: the root entry has mode %o, not a directory", h, e.Mode)
	}

	once := map[uint64]bool{}
	done := false
	var kind uint64 // the file type the items say
	for !done {
		h, err := d.next()
		if err != nil {
			return err
		}
		switch h.typ {
		case typeXattr:
			b, err := d.meta.bytes(h.content())
			if err != nil {
				return err
			}
			i := bytes.IndexByte(b, 0)
			if i <= 0 {
				return fmt.Errorf("%s: %s: no name before the value separator", pathName(path), h)
			}
			e.Xattrs = append(e.Xattrs, string(b[:i])+"="+string(b[i+1:]))
		case typeACLUser, typeACLGroup, typeACLDefaultUser, typeACLDefaultGroup:
			if _, err := d.exact(h, 16, path); err != nil {
				return err
			}
			e.ACLs++
		case typeACLGroupObj, typeACLDefault, typeFcaps, typeQuotaProjID:
			if once[h.typ] {
				return fmt.Errorf("%s: %s: a second one in this entry", pathName(path), h)
			}
			once[h.typ] = true
			n := map[uint64]uint64{typeACLGroupObj: 8, typeACLDefault: 32, typeQuotaProjID: 8}[h.typ]
			if h.typ == typeFcaps {
				n = h.content()
			}
			if _, err := d.exact(h, n, path); err != nil {
				return err
			}
			if h.typ != typeFcaps && h.typ != typeQuotaProjID {
				e.ACLs++
			}
		case typeSymlink:
			b, err := d.meta.bytes(h.content())
			if err != nil {
				return err
			}
			if len(b) < 2 || b[len(b)-1] != 0 || bytes.IndexByte(b[:len(b)-1], 0) >= 0 {
				return fmt.Errorf("%s: %s: target is not a non-empty NUL-terminated string", pathName(path), h)
			}
			e.Symlink, kind, done = string(b[:len(b)-1]), modeIFLNK, true
		case typeDevice:
			b, err := d.exact(h, 16, path)
			if err != nil {
				return err
			}
			e.Device = [2]uint64{le64(b), le64(b[8:])}
			kind, done = modeIFCHR, true
		case typePayloadRef:
			b, err := d.exact(h, 16, path)
			if err != nil {
				return err
			}
			if err := d.payload(path, h, le64(b), le64(b[8:]), &e); err != nil {
				return err
			}
			kind, done = modeIFREG, true
		case typeFilename, typeGoodbye:
			// the entry's items end here: a directory's contents (or
			// its goodbye table), or the parent's next item after a
			// FIFO or socket
			hh := h
			d.peeked = &hh
			kind, done = modeIFDIR, true
		case typePayload:
			return fmt.Errorf("%s: %s: inline PAYLOAD in the metadata stream of a split archive (pxar would read it from the payload stream)", pathName(path), h)
		case typeHardlink:
			return fmt.Errorf("%s: %s: unexpected hardlink entry inside an entry", pathName(path), h)
		default:
			return fmt.Errorf("%s: %s: unexpected item in an entry", pathName(path), h)
		}
	}
	t := e.Type()
	ok := t == kind
	switch kind {
	case modeIFCHR:
		ok = t == modeIFCHR || t == modeIFBLK
	case modeIFDIR:
		ok = t == modeIFDIR || t == modeIFIFO || t == modeIFSOCK
	}
	if !ok {
		return fmt.Errorf("%s: ENTRY at metadata offset %d has mode %o, but its items make it a %s", pathName(path), entryOff, e.Mode, kindName(kind))
	}
	if t == modeIFREG {
		d.files[fnOff] = len(d.arch.Entries)
	}
	idx := len(d.arch.Entries)
	d.arch.Entries = append(d.arch.Entries, e)
	if t == modeIFDIR {
		if err := d.dir(path, entryOff, root); err != nil {
			return err
		}
	}
	d.arch.Entries[idx].EndOffset = d.end()
	return nil
}

func kindName(k uint64) string {
	switch k {
	case modeIFREG:
		return "regular file (PAYLOAD_REF)"
	case modeIFLNK:
		return "symlink (SYMLINK)"
	case modeIFCHR:
		return "device (DEVICE)"
	}
	return "directory, FIFO or socket (no content item)"
}

// end is the metadata offset where the item last decoded ends.
func (d *decoder) end() uint64 {
	if d.peeked != nil {
		return d.peeked.off
	}
	return d.meta.pos
}

// hardlink decodes a HARDLINK item: offset u64 (back from its own
// FILENAME to the target's) and the target's path, NUL-terminated.
func (d *decoder) hardlink(h header, e Entry) error {
	if h.content() <= 8 {
		return fmt.Errorf("%s: %s: bad hardlink entry (too small)", e.Path, h)
	}
	b, err := d.meta.bytes(h.content())
	if err != nil {
		return err
	}
	off, target := le64(b), b[8:]
	if target[len(target)-1] != 0 || bytes.IndexByte(target[:len(target)-1], 0) >= 0 {
		return fmt.Errorf("%s: %s: target path is not NUL-terminated", e.Path, h)
	}
	e.Hardlink = string(target[:len(target)-1])
	if off == 0 || off > e.Offset {
		return fmt.Errorf("%s: %s: offset %d does not point to an earlier entry", e.Path, h, off)
	}
	i, ok := d.files[e.Offset-off]
	if !ok {
		return fmt.Errorf("%s: %s: offset %d points to metadata offset %d, which is no regular file's FILENAME", e.Path, h, off, e.Offset-off)
	}
	if t := d.arch.Entries[i].Path; t != e.Hardlink {
		return fmt.Errorf("%s: %s: names %q, but its offset points to %q", e.Path, h, e.Hardlink, t)
	}
	e.EndOffset = d.meta.pos
	d.arch.Entries = append(d.arch.Entries, e)
	return nil
}

// payload reads a regular file's content as pxar's sequential decoder
// does with a separate payload input: skip forward to the reference's
// offset (never back), read and check the PAYLOAD header, read the
// content.
func (d *decoder) payload(path string, h header, off, size uint64, e *Entry) error {
	if off < d.consumed {
		return fmt.Errorf("%s: PAYLOAD_REF at metadata offset %d: unexpected offset %d, smaller than already consumed payload %d (pxar's sequential decoder fails here)",
			path, h.off, off, d.consumed)
	}
	gap := off - d.consumed
	if err := d.pay.skip(gap); err != nil {
		return fmt.Errorf("%s: PAYLOAD_REF offset %d: %w", path, off, err)
	}
	d.arch.Unreferenced += gap
	var b [headerSize]byte
	if err := d.pay.full(b[:]); err != nil {
		return fmt.Errorf("%s: PAYLOAD_REF offset %d: %w", path, off, err)
	}
	if t, full := le64(b[:]), le64(b[8:]); t != typePayload || full != headerSize+size {
		return fmt.Errorf("%s: PAYLOAD_REF (offset %d, size %d) at metadata offset %d: the payload stream has %s of full size %d there, not PAYLOAD of size %d",
			path, off, size, h.off, typeName(t), full, headerSize+size)
	}
	hash := sha256.New()
	lr := &io.LimitedReader{R: d.pay.r, N: int64(size)}
	r := io.TeeReader(lr, hash)
	if d.opt.File != nil {
		if err := d.opt.File(path, size, r); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("%s: payload stream: %w", path, err)
	}
	d.pay.pos += size - uint64(lr.N)
	if lr.N != 0 {
		return fmt.Errorf("%s: payload stream ends at offset %d, inside the file's content (%d bytes short)", path, d.pay.pos, lr.N)
	}
	d.consumed = off + headerSize + size
	e.Size, e.Payload = size, off
	copy(e.SHA256[:], hash.Sum(nil))
	d.arch.PayloadRefs++
	return nil
}

// gbItem is one goodbye table item: the name's hash, the distance back
// from the GOODBYE item to the entry's FILENAME, the entry's size.
type gbItem struct{ hash, off, size uint64 }

// a directory's entry as decoded, for its goodbye item
type dirEntry struct {
	hash, off, size uint64
	fileSize        uint64 // a regular file's content size
}

func cmpItem(a, b gbItem) int {
	switch {
	case a.hash != b.hash:
		return cmpU(a.hash, b.hash)
	case a.off != b.off:
		return cmpU(a.off, b.off)
	}
	return cmpU(a.size, b.size)
}

func cmpU(a, b uint64) int {
	if a < b {
		return -1
	} else if a > b {
		return 1
	}
	return 0
}

// dir decodes a directory's contents after its ENTRY (at entryOff):
// FILENAME + entry pairs, then its GOODBYE table, which must be the
// one pxar's encoder writes for them.
func (d *decoder) dir(path string, entryOff uint64, root bool) error {
	var items []dirEntry
	var prev []byte
	for {
		h, err := d.next()
		if err != nil {
			return err
		}
		switch h.typ {
		case typeFilename:
			b, err := d.meta.bytes(h.content())
			if err != nil {
				return err
			}
			if len(b) == 0 || b[len(b)-1] != 0 {
				return fmt.Errorf("%s: %s: illegal path found (missing terminating zero)", pathName(path), h)
			}
			name := b[:len(b)-1]
			switch {
			case len(name) == 0, bytes.IndexByte(name, '/') >= 0, bytes.IndexByte(name, 0) >= 0,
				string(name) == ".", string(name) == "..":
				return fmt.Errorf("%s: %s: illegal file name %q", pathName(path), h, name)
			case prev != nil && bytes.Compare(prev, name) >= 0:
				return fmt.Errorf("%s: %s: name %q after %q: not in strictly increasing byte order (pxar's encoder, as PBS uses it, writes sorted names, each once)", pathName(path), h, name, prev)
			}
			prev = name
			if err := d.entry(join(path, string(name)), h.off, false); err != nil {
				return err
			}
			it := dirEntry{hash: hashName(name), off: h.off, size: d.end() - h.off}
			if e := &d.arch.Entries[len(d.arch.Entries)-1]; e.Path == join(path, string(name)) && e.IsRegular() {
				it.fileSize = e.Size
			}
			items = append(items, it)
		case typeGoodbye:
			return d.goodbye(path, h, entryOff, root, items)
		default:
			return fmt.Errorf("%s: %s: expected filename or directory-goodbye pxar entry", pathName(path), h)
		}
	}
}

// goodbye checks a directory's GOODBYE table against its entries (with
// their FILENAME offsets as found): one item per entry plus the tail,
// arranged as binary_tree_array::copy arranges the items sorted by
// hash, offsets relative to the GOODBYE item.
//
// An item's size is the entry's size in the metadata stream, except
// that pxar's encoder adds a regular file's content size when it writes
// the file's payload itself (create_file: file_size + meta_size, though
// the content is in the payload stream) and not when it adds a
// reference to a reused payload (add_payload_ref); either is accepted
// for regular files (pxar's readers do not depend on it).
func (d *decoder) goodbye(path string, h header, entryOff uint64, root bool, items []dirEntry) error {
	n := uint64(len(items))
	if h.content() != goodbyeItem*(n+1) {
		return fmt.Errorf("%s: %s: %d bytes for %d entries, want %d", pathName(path), h, h.content(), n, goodbyeItem*(n+1))
	}
	b, err := d.meta.bytes(h.content())
	if err != nil {
		return err
	}
	at := func(i uint64) gbItem {
		o := goodbyeItem * i
		return gbItem{le64(b[o:]), le64(b[o+8:]), le64(b[o+16:])}
	}
	tail := at(n)
	if tail.hash != goodbyeTailMarker {
		return fmt.Errorf("%s: %s: last item has hash %#x, not the tail marker", pathName(path), h, tail.hash)
	}
	if tail.size != h.full {
		return fmt.Errorf("%s: %s: tail size %d, the GOODBYE item is %d bytes", pathName(path), h, tail.size, h.full)
	}
	switch {
	case tail.off == h.off-entryOff:
	case root && tail.off == h.off:
		// pxar's encoder: the root's state starts at offset 0, before FORMAT_VERSION
	default:
		return fmt.Errorf("%s: %s: tail offset %d, want %d: back to the directory's ENTRY at metadata offset %d", pathName(path), h, tail.off, h.off-entryOff, entryOff)
	}
	if root {
		d.arch.RootTailOffset = tail.off
	}
	// in-order traversal of the array-embedded search tree
	var inorder []gbItem
	var walk func(i uint64)
	walk = func(i uint64) {
		if i >= n {
			return
		}
		walk(2*i + 1)
		inorder = append(inorder, at(i))
		walk(2*i + 2)
	}
	walk(0)
	for i := 1; i < len(inorder); i++ {
		if inorder[i-1].hash > inorder[i].hash {
			return fmt.Errorf("%s: %s: not a binary search tree by hash (%#x before %#x in order)", pathName(path), h, inorder[i-1].hash, inorder[i].hash)
		}
	}
	want := make([]dirEntry, n)
	for i, it := range items {
		want[i] = it
		want[i].off = h.off - it.off
	}
	slices.SortFunc(want, func(a, b dirEntry) int { return cmpItem(gbItem{a.hash, a.off, 0}, gbItem{b.hash, b.off, 0}) })
	slices.SortFunc(inorder, func(a, b gbItem) int { return cmpItem(gbItem{a.hash, a.off, 0}, gbItem{b.hash, b.off, 0}) })
	for i, w := range want {
		got := inorder[i]
		if got.hash != w.hash || got.off != w.off || (got.size != w.size && (w.fileSize == 0 || got.size != w.size+w.fileSize)) {
			return fmt.Errorf("%s: %s: goodbye item %d in hash order is %+v, want %+v (hash of the name, offset back to its FILENAME, entry size, plus a regular file's content size %d)", pathName(path), h, i, got, gbItem{w.hash, w.off, w.size}, w.fileSize)
		}
	}
	return nil
}
