package filearchive

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/cairnfs/cairn/store/pxar"
)

// The stat table (NAME.pxar.stat.didx) is a stream of one record per
// regular file stored in the archive (hard links excluded), in archive
// order:
//
//	magic "cairnST\x03"   (version 1: "cairnST\x01", 2: "cairnST\x02")
//	per file:
//	  flags   u8       bit 0: stat trusted, bit 1: digest present
//	  id      uvarint  Entry.ID minus the previous record's (> 0)
//	  ino     varint   inode minus the previous record's (version 1:
//	                   uvarint, the inode itself)
//	  csec    varint   ctime seconds minus the previous record's
//	  cnsec   uvarint  version 1 only: ctime nanoseconds (< 1e9)
//	  digest  [16]     if flagged: the first 16 bytes of the SHA-256 of
//	                   the content stored (version 1: [32], the whole
//	                   SHA-256, read and ignored)
//
// "Trusted" means the file's ctime was older than the backup's start by
// more than the timestamp granularity margin: a change after the file
// was read must then move its ctime. Records of files that changed while
// they were read, or too shortly before, are untrusted and the next
// backup reads those files again. That is also why seconds suffice: a
// trusted record's ctime is at least the margin (2 s) before the backup
// began, and any change after the backup read the file gets a ctime
// after its start, so in a later second (the clock going back by more
// than the margin aside; the file's mtime, in nanoseconds, and size are
// compared too, from the archive).
//
// Every incremental backup writes the whole table anew, and a change
// anywhere in a chunk makes it a new chunk: with changes scattered over
// the tree, the table is stored again in full each time. So it holds
// only what change detection needs, in a form that compresses: deltas
// (inodes of files made together are near each other), no ctime
// nanoseconds (incompressible, and half of what was left in version 1):
// 5 to 6 bytes a file on Go's tree without digests. Digests are kept
// only on object storage (keepDigests, files.go), and only for files
// below hashLimit, the ones whose metadata changed but whose size did
// not and that are then read to be compared: a small file shares its
// payload chunk with its neighbours, and without the digest it is stored
// anew (comparing it means loading and decoding the whole previous
// chunk), a new small chunk around each such file, and there a request
// each (touching 1% of Go's tree made 114 new chunks; with digests
// none). 16 bytes keep a collision (a file changed to other content
// with the same digest, even one made on purpose) out of reach at half
// of version 1's 32. A file whose record has no digest (tables of
// versions 1 and 2, or of a store on a local disk) is compared with its
// previous content where that is cheap, else stored anew.
var (
	statMagic   = [8]byte{'c', 'a', 'i', 'r', 'n', 'S', 'T', 3}
	statMagicV2 = [8]byte{'c', 'a', 'i', 'r', 'n', 'S', 'T', 2}
	statMagicV1 = [8]byte{'c', 'a', 'i', 'r', 'n', 'S', 'T', 1}
)

// digestSize is the bytes of a version 3 record's digest.
const digestSize = 16

// ErrBadStatTable is wrapped by errors about an unreadable stat table.
var ErrBadStatTable = errors.New("bad stat table")

const (
	recTrusted = 1 << 0
	recDigest  = 1 << 1
)

// statRecord is what the stat table keeps of one stored regular file.
type statRecord struct {
	ID      uint64 // the entry's offset in the metadata stream
	Ino     uint64
	Ctime   pxar.Timestamp
	Trusted bool
	// HasNanos: Ctime.Nanos is known (version 1 tables); later
	// versions' records keep seconds.
	HasNanos bool
	// Digest is contentDigest of the content stored, when HasDigest.
	Digest    [digestSize]byte
	HasDigest bool
}

// sameCtime reports whether ts is the record's ctime, as precisely as
// the record keeps it.
func (r *statRecord) sameCtime(ts pxar.Timestamp) bool {
	return r.Ctime.Secs == ts.Secs && (!r.HasNanos || r.Ctime.Nanos == ts.Nanos)
}

// statWriter appends records; IDs must increase.
type statWriter struct {
	w       *bufio.Writer
	lastID  uint64
	lastIno uint64
	lastCs  int64
	n       int
	buf     []byte
}

func newStatWriter(w io.Writer) (*statWriter, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.Write(statMagic[:]); err != nil {
		return nil, err
	}
	return &statWriter{w: bw}, nil
}

func (s *statWriter) add(r *statRecord) error {
	if r.ID <= s.lastID || r.Ctime.Nanos >= 1e9 {
		return fmt.Errorf("stat table: record for entry %d after %d (ctime nanoseconds %d)", r.ID, s.lastID, r.Ctime.Nanos)
	}
	var flags byte
	if r.Trusted {
		flags |= recTrusted
	}
	if r.HasDigest {
		flags |= recDigest
	}
	b := append(s.buf[:0], flags)
	b = binary.AppendUvarint(b, r.ID-s.lastID)
	b = binary.AppendVarint(b, int64(r.Ino-s.lastIno))
	b = binary.AppendVarint(b, r.Ctime.Secs-s.lastCs)
	if r.HasDigest {
		b = append(b, r.Digest[:]...)
	}
	s.buf = b
	s.lastIno = r.Ino
	s.lastID, s.lastCs = r.ID, r.Ctime.Secs
	s.n++
	_, err := s.w.Write(b)
	return err
}

func (s *statWriter) flush() error { return s.w.Flush() }

// statReader reads records forward; find serves increasing IDs.
type statReader struct {
	name    string
	r       *bufio.Reader
	off     int64 // stream offset of the next byte
	version byte  // 1: absolute inodes, ctime nanoseconds, 32-byte digests
	lastID  uint64
	lastIno uint64
	lastCs  int64
	next    statRecord
	have    bool // next holds an unconsumed record
	eof     bool
}

func newStatReader(name string, r io.Reader) (*statReader, error) {
	s := &statReader{name: name, r: bufio.NewReaderSize(r, 64<<10)}
	var m [8]byte
	if _, err := io.ReadFull(s.r, m[:]); err != nil || (m != statMagic && m != statMagicV2 && m != statMagicV1) {
		return nil, fmt.Errorf("%s: %w: no stat table magic (%v)", name, ErrBadStatTable, err)
	}
	s.version = m[7]
	s.off = 8
	return s, nil
}

func (s *statReader) bad(at int64, format string, args ...any) error {
	return fmt.Errorf("%s: %w at offset %d: %s", s.name, ErrBadStatTable, at, fmt.Sprintf(format, args...))
}

// read decodes the next record into s.next.
func (s *statReader) read() error {
	at := s.off
	flags, err := s.r.ReadByte()
	if err == io.EOF {
		s.eof = true
		return nil
	}
	if err != nil {
		return s.bad(at, "%v", err)
	}
	s.off++
	u := func() uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = binary.ReadUvarint(s)
		return v
	}
	dID := u()
	v1 := s.version == 1
	var ino uint64
	if v1 {
		ino = u()
	} else if err == nil {
		var d int64
		d, err = binary.ReadVarint(s)
		ino = s.lastIno + uint64(d)
	}
	var csec int64
	if err == nil {
		csec, err = binary.ReadVarint(s)
	}
	var nsec uint64
	if v1 {
		nsec = u()
	}
	switch {
	case err != nil:
		return s.bad(at, "truncated record: %v", err)
	case flags&^(recTrusted|recDigest) != 0 || dID == 0 || dID > math.MaxUint64-s.lastID || nsec >= 1e9:
		return s.bad(at, "invalid record (flags %#x, id step %d, nanoseconds %d)", flags, dID, nsec)
	}
	r := statRecord{ID: s.lastID + dID, Ino: ino, Ctime: pxar.Timestamp{Secs: s.lastCs + csec, Nanos: uint32(nsec)},
		Trusted: flags&recTrusted != 0, HasNanos: v1}
	if flags&recDigest != 0 {
		if err := s.digest(&r); err != nil {
			return s.bad(at, "truncated digest: %v", err)
		}
	}
	s.lastIno = ino
	s.lastID, s.lastCs = r.ID, r.Ctime.Secs
	s.next, s.have = r, true
	return nil
}

// digest reads a flagged record's digest into r: version 3's; the
// 32-byte ones of earlier versions are skipped.
func (s *statReader) digest(r *statRecord) error {
	if s.version < 3 {
		n, err := s.r.Discard(32)
		s.off += int64(n)
		return err
	}
	n, err := io.ReadFull(s.r, r.Digest[:])
	s.off += int64(n)
	r.HasDigest = err == nil
	return err
}

// ReadByte and Read count the offset for messages.
func (s *statReader) ReadByte() (byte, error) {
	b, err := s.r.ReadByte()
	if err == nil {
		s.off++
	}
	return b, err
}

func (s *statReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.off += int64(n)
	return n, err
}

// find returns the record of entry id. IDs asked for must not decrease;
// records before id are skipped.
func (s *statReader) find(id uint64) (statRecord, bool, error) {
	for {
		if !s.have && !s.eof {
			if err := s.read(); err != nil {
				return statRecord{}, false, err
			}
		}
		if s.eof || s.next.ID > id {
			return statRecord{}, false, nil
		}
		if s.next.ID == id {
			return s.next, true, nil
		}
		s.have = false
	}
}
