package dirent

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Entry is one directory entry as getdents gives it. Type is a DT_*
// value (DT_UNKNOWN where the file system does not fill it in).
type Entry struct {
	Name string
	Ino  uint64
	Type uint8
}

// ErrMalformed is a record shorter than its header or running past the
// bytes getdents returned.
var ErrMalformed = errors.New("malformed directory entry")

// bufSize is the buffer Read makes when given none.
const bufSize = 32 << 10

// Read lists the directory open at fd (moving its offset), without "."
// and "..", in directory order. *buf is the getdents buffer, made on
// first use and kept for the next call.
func Read(fd int, buf *[]byte) ([]Entry, error) {
	if len(*buf) == 0 {
		*buf = make([]byte, bufSize)
	}
	var out []Entry
	for {
		n, err := unix.Getdents(fd, *buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		if out, err = Parse((*buf)[:n], out); err != nil {
			return out, err
		}
	}
}

// SortByName sorts a listing by name (byte order).
func SortByName(ents []Entry) {
	slices.SortFunc(ents, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
}

// Parse appends the records of b to out, without "." and ".."; on a
// malformed record it returns the entries before it and ErrMalformed.
func Parse(b []byte, out []Entry) ([]Entry, error) {
	const head = 19
	for len(b) > 0 {
		if len(b) < head {
			return out, ErrMalformed
		}
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < head || reclen > len(b) {
			return out, ErrMalformed
		}
		name := b[head:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if s := string(name); s != "." && s != ".." && s != "" {
			out = append(out, Entry{Name: s, Ino: binary.NativeEndian.Uint64(b[:8]), Type: b[18]})
		}
		b = b[reclen:]
	}
	return out, nil
}
