package format

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// The subset of pxar v1 (proxmox/pxar src/format/mod.rs) that PBS uses
// for snapshot archives: one directory of regular files without xattrs,
// ACLs or further metadata.
const (
	pxarFormatVersion = 0x730f6c75df16a40d
	pxarEntry         = 0xd5956474e588acef
	pxarEntryV1       = 0x11da850a1c1cceff
	pxarFilename      = 0x16701121063917b3
	pxarPayload       = 0x28147a1b0b7c1a25
	pxarGoodbye       = 0x2fec4fa642d5731d
	pxarGoodbyeTail   = 0xef5eed5b753e1555

	pxarHeaderSize  = 16
	pxarStatSize    = 40 // mode u64, flags u64, uid u32, gid u32, mtime {i64, u32, u32}
	pxarStatV1Size  = 32 // mode u64, flags u64, uid u32, gid u32, mtime u64 ns
	pxarGoodbyeItem = 24 // hash u64, offset u64, size u64
	pxarMaxFilename = 255
	unixIFMT        = 0o170000
	unixIFDIR       = 0o040000
	unixIFREG       = 0o100000
)

// pxarStat is pxar's ENTRY.
type pxarStat struct {
	Mode     uint64
	Flags    uint64
	UID, GID uint32
	Mtime    time.Time
}

func (s pxarStat) append(b []byte) []byte {
	b = binary.LittleEndian.AppendUint64(b, s.Mode)
	b = binary.LittleEndian.AppendUint64(b, s.Flags)
	b = binary.LittleEndian.AppendUint32(b, s.UID)
	b = binary.LittleEndian.AppendUint32(b, s.GID)
	var secs int64
	var nanos uint32
	if !s.Mtime.IsZero() {
		secs, nanos = s.Mtime.Unix(), uint32(s.Mtime.Nanosecond())
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(secs))
	b = binary.LittleEndian.AppendUint32(b, nanos)
	return binary.LittleEndian.AppendUint32(b, 0)
}

func parseStat(htype uint64, b []byte) pxarStat {
	s := pxarStat{
		Mode:  binary.LittleEndian.Uint64(b[0:]),
		Flags: binary.LittleEndian.Uint64(b[8:]),
		UID:   binary.LittleEndian.Uint32(b[16:]),
		GID:   binary.LittleEndian.Uint32(b[20:]),
	}
	if htype == pxarEntryV1 {
		s.Mtime = time.Unix(0, int64(binary.LittleEndian.Uint64(b[24:])))
	} else {
		s.Mtime = time.Unix(int64(binary.LittleEndian.Uint64(b[24:])), int64(binary.LittleEndian.Uint32(b[32:])))
	}
	return s
}

type goodbyeItem struct{ hash, offset, size uint64 }

// goodbyeTable encodes the goodbye table that ends a directory whose
// entries are items (offsets absolute) and whose ENTRY starts at
// entryOff, with the table itself at tableOff: a binary search tree of
// the items sorted by hash, offsets relative to the table, then the tail.
func goodbyeTable(items []goodbyeItem, entryOff, tableOff uint64) []byte {
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, func(a, b goodbyeItem) int {
		switch {
		case a.hash < b.hash:
			return -1
		case a.hash > b.hash:
			return 1
		}
		return 0
	})
	bst := make([]goodbyeItem, len(sorted))
	bstCopy(len(sorted), func(src, dst int) {
		it := sorted[src]
		it.offset = tableOff - it.offset
		bst[dst] = it
	})
	size := uint64(pxarHeaderSize + (len(items)+1)*pxarGoodbyeItem)
	bst = append(bst, goodbyeItem{pxarGoodbyeTail, tableOff - entryOff, size})
	b := make([]byte, 0, size)
	b = binary.LittleEndian.AppendUint64(b, pxarGoodbye)
	b = binary.LittleEndian.AppendUint64(b, size)
	for _, it := range bst {
		b = binary.LittleEndian.AppendUint64(b, it.hash)
		b = binary.LittleEndian.AppendUint64(b, it.offset)
		b = binary.LittleEndian.AppendUint64(b, it.size)
	}
	return b
}

// bstCopy lays out n sorted items as an implicit binary search tree
// (pxar binary_tree_array::copy): fn(src, dst) moves sorted[src] to
// tree[dst].
func bstCopy(n int, fn func(src, dst int)) {
	if n == 0 {
		return
	}
	e := 0
	for 1<<(e+1) <= n {
		e++
	}
	var inner func(n, o, e, i int)
	inner = func(n, o, e, i int) {
		p := 1 << e
		t := p + p>>1 - 1
		m := p - 1
		if n <= t {
			m = p - 1 - (t - n)
		}
		fn(o+m, i)
		if m > 0 {
			inner(m, o, e-1, 2*i+1)
		}
		if m+1 < n {
			inner(n-m-1, o+m+1, e-1, 2*i+2)
		}
	}
	inner(n, 0, e, 0)
}

func checkFilename(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > pxarMaxFilename ||
		strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("invalid file name %q", name)
	}
	return nil
}

// pxarWriter encodes one directory of regular files.
type pxarWriter struct {
	w     io.Writer
	pos   uint64
	items []goodbyeItem
	buf   []byte
}

func (p *pxarWriter) write(b []byte) error {
	n, err := p.w.Write(b)
	p.pos += uint64(n)
	return err
}

func (p *pxarWriter) item(htype uint64, content []byte) error {
	p.buf = binary.LittleEndian.AppendUint64(p.buf[:0], htype)
	p.buf = binary.LittleEndian.AppendUint64(p.buf, uint64(pxarHeaderSize+len(content)))
	p.buf = append(p.buf, content...)
	return p.write(p.buf)
}

func (p *pxarWriter) begin(root pxarStat) error {
	return p.item(pxarEntry, root.append(nil))
}

// file writes one regular file whose content is exactly size bytes of r.
func (p *pxarWriter) file(name string, st pxarStat, size int64, r io.Reader, copyBuf []byte) error {
	if err := checkFilename(name); err != nil {
		return err
	}
	start := p.pos
	if err := p.item(pxarFilename, append([]byte(name), 0)); err != nil {
		return err
	}
	if err := p.item(pxarEntry, st.append(nil)); err != nil {
		return err
	}
	var h [pxarHeaderSize]byte
	binary.LittleEndian.PutUint64(h[:], pxarPayload)
	binary.LittleEndian.PutUint64(h[8:], uint64(pxarHeaderSize+size))
	if err := p.write(h[:]); err != nil {
		return err
	}
	n, err := io.CopyBuffer(writerFunc(p.write), io.LimitReader(r, size), copyBuf)
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("file %q shrank while reading (%d of %d bytes)", name, n, size)
	}
	var extra [1]byte
	if m, _ := r.Read(extra[:]); m > 0 {
		return fmt.Errorf("file %q grew while reading (more than %d bytes)", name, size)
	}
	p.items = append(p.items, goodbyeItem{hashFilename(name), start, p.pos - start})
	return nil
}

func (p *pxarWriter) finish() error {
	return p.write(goodbyeTable(p.items, 0, p.pos))
}

// writerFunc adapts a write-everything function to io.Writer.
type writerFunc func([]byte) error

func (f writerFunc) Write(b []byte) (int, error) {
	if err := f(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// equalGoodbye compares an encoded table with the one items imply.
func equalGoodbye(got []byte, items []goodbyeItem, tableOff uint64) bool {
	return bytes.Equal(got, goodbyeTable(items, 0, tableOff))
}
