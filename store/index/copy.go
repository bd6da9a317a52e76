package index

import (
	"crypto/sha256"
	"fmt"
	"io"
)

// Copy writes the file of x, an index Open opened, to w byte for byte
// as the file is now (not as it was when opened), in pieces read from
// its mapping. It returns the checksum the copied header holds and the
// SHA-256 of the copied entries: a file changed since it was opened
// shows as the two differing, or differing from what the caller expects
// (a sync compares both with the manifest). A fault reading the file is
// the index's error (ErrFault).
func Copy(w io.Writer, x Index) (header, entries [32]byte, err error) {
	var m *indexMap
	switch v := x.(type) {
	case *Fixed:
		m = v.m
	case *Dynamic:
		m = v.m
	default:
		return header, entries, fmt.Errorf("%s: %w: index of type %T cannot be copied", x.Path(), ErrFormat, x)
	}
	const piece = 1 << 20
	buf := make([]byte, min(piece, len(m.data)))
	h := sha256.New()
	for off := 0; off < len(m.data); off += piece {
		n := min(piece, len(m.data)-off)
		if m.read(buf[:n], off); m.err() != nil {
			return header, entries, m.err()
		}
		if off == 0 {
			copy(header[:], buf[offCsum:offCsum+32])
			h.Write(buf[indexHeaderSize:n])
		} else {
			h.Write(buf[:n])
		}
		if _, err := w.Write(buf[:n]); err != nil {
			return header, entries, err
		}
	}
	copy(entries[:], h.Sum(nil))
	return header, entries, nil
}
