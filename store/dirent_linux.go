package store

import (
	"encoding/binary"
	"errors"

	"golang.org/x/sys/unix"
)

// dirent is a directory entry as getdents gives it: its name and d_ino.
type dirent struct {
	name string
	ino  uint64
}

// readDirents reads the directory open at fd (without "." and "..").
func readDirents(fd int) ([]dirent, error) {
	var out []dirent
	buf := make([]byte, 32<<10)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return out, nil
		}
		out, err = parseDirents(buf[:n], out)
		if err != nil {
			return nil, err
		}
	}
}

var errBadDirent = errors.New("malformed directory entry")

// parseDirents appends the linux_dirent64 records of b (d_ino u64,
// d_off s64, d_reclen u16, d_type u8, NUL-terminated name).
func parseDirents(b []byte, out []dirent) ([]dirent, error) {
	const head = 19
	for len(b) > 0 {
		if len(b) < head {
			return nil, errBadDirent
		}
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < head || reclen > len(b) {
			return nil, errBadDirent
		}
		name := b[head:reclen]
		for i, c := range name {
			if c == 0 {
				name = name[:i]
				break
			}
		}
		if s := string(name); s != "." && s != ".." {
			out = append(out, dirent{name: s, ino: binary.NativeEndian.Uint64(b[:8])})
		}
		b = b[reclen:]
	}
	return out, nil
}
