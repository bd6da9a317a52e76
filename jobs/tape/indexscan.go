package tape

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

const indexHeaderSize = 4096

// digestScanner is an io.Writer that collects the chunk digests of a
// fixed (.fidx: digest[32]…) or dynamic (.didx: end u64 | digest[32]…)
// index as its bytes stream past, after a 4096-byte header. It also
// hashes the entries and keeps the header's start, for the checks
// against the manifest (sum).
type digestScanner struct {
	name    string
	magic   [8]byte
	entry   int // entry size
	skip    int // bytes before the digest in an entry
	off     int64
	partial []byte
	add     func(chunk.Digest)
	head    [indexHeadKept]byte // the header's first bytes: magic, uuid, ctime, csum, size
	entries hash.Hash           // SHA-256 of the entries: the index checksum
	end     uint64              // a dynamic index's last end offset: its data size
}

// indexHeadKept is how much of an index header the scanner keeps: up to
// a fixed index's data size (offset 64).
const indexHeadKept = 72

// newDigestScanner returns a scanner for an index file name, or nil when
// the name is not an index.
func newDigestScanner(name string, add func(chunk.Digest)) *digestScanner {
	switch {
	case strings.HasSuffix(name, ".fidx"):
		return &digestScanner{name: name, magic: index.MagicFixed, entry: chunk.DigestSize, add: add, entries: sha256.New()}
	case strings.HasSuffix(name, ".didx"):
		return &digestScanner{name: name, magic: index.MagicDynamic, entry: 8 + chunk.DigestSize, skip: 8, add: add,
			entries: sha256.New()}
	}
	return nil
}

func (s *digestScanner) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if s.off < indexHeaderSize {
			c := min(int64(len(p)), indexHeaderSize-s.off)
			if s.off < 8 {
				m := min(c, 8-s.off)
				if string(p[:m]) != string(s.magic[s.off:s.off+m]) {
					return 0, fmt.Errorf("index %s: wrong magic", s.name)
				}
			}
			if s.off < indexHeadKept {
				copy(s.head[s.off:], p[:c])
			}
			s.off += c
			p = p[c:]
			continue
		}
		if len(s.partial) > 0 || len(p) < s.entry {
			c := min(len(p), s.entry-len(s.partial))
			s.partial = append(s.partial, p[:c]...)
			p = p[c:]
			s.off += int64(c)
			if len(s.partial) == s.entry {
				s.entryDone(s.partial)
				s.partial = s.partial[:0]
			}
			continue
		}
		for len(p) >= s.entry {
			s.entryDone(p[:s.entry])
			p = p[s.entry:]
			s.off += int64(s.entry)
		}
	}
	return n, nil
}

func (s *digestScanner) entryDone(e []byte) {
	s.entries.Write(e)
	if s.skip == 8 {
		s.end = binary.LittleEndian.Uint64(e)
	}
	s.add(chunk.Digest(e[s.skip:]))
}

// sum is what the index holds for the checks against its manifest entry:
// the checksum its header gives, its entries' SHA-256 and its data size.
func (s *digestScanner) sum() fileSum {
	f := fileSum{index: true, size: s.end}
	copy(f.headerCsum[:], s.head[32:64])
	s.entries.Sum(f.sum[:0])
	if s.skip == 0 {
		f.size = binary.LittleEndian.Uint64(s.head[64:72])
	}
	return f
}

// Close checks that the index ended on an entry boundary.
func (s *digestScanner) Close() error {
	if s.off < indexHeaderSize || len(s.partial) != 0 {
		return fmt.Errorf("index %s: truncated (%d bytes)", s.name, s.off)
	}
	return nil
}
