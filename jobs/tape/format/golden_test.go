package format

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cairnfs/cairn/jobs/tape/block"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden snapshot archives in testdata/snapshot")

// goldenData is size deterministic pseudo-random bytes (SHA-256 in
// counter mode over seed), the same on every platform and Go version.
func goldenData(seed string, size int) []byte {
	b := make([]byte, 0, size+sha256.Size)
	for i := uint64(0); len(b) < size; i++ {
		h := sha256.Sum256(binary.LittleEndian.AppendUint64([]byte(seed), i))
		b = append(b, h[:]...)
	}
	return b[:size]
}

// goldenRepeat is size bytes of a 4 KiB goldenData pattern, repeated, so
// that the golden files of large archives compress well in git.
func goldenRepeat(seed string, size int) []byte {
	return bytes.Repeat(goldenData(seed, 4096), size/4096+1)[:size]
}

type goldenSnapshot struct {
	name     string // golden file testdata/snapshot/NAME.tape
	snapshot string
	fsys     fstest.MapFS
	files    []string
	leomAt   int // block at which the tape reports LEOM; 0: never
}

// goldenSnapshots are the snapshot archives whose tape bytes the golden
// files fix: a VM (image indexes and blobs), a container (file archive
// indexes), a host backup of many files, one in a namespace, an empty
// one, odd metadata (special mode bits, owners, mtimes before 1970, zero
// and far in the future) and an archive cut short at the end of the tape.
func goldenSnapshots() []goldenSnapshot {
	mt := time.Date(2024, 6, 5, 12, 0, 0, 123456789, time.UTC)
	owner := &syscall.Stat_t{Uid: 34, Gid: 1034}
	vm := fstest.MapFS{
		"index.json.blob":         {Data: []byte(`{"backup-type":"vm","backup-id":"100","files":[]}`), Mode: 0o644, ModTime: mt},
		"drive-scsi0.img.fidx":    {Data: goldenData("scsi0", 4096+40*32), Mode: 0o600, ModTime: mt},
		"drive-efidisk0.img.fidx": {Data: goldenData("efi", 4096+32), Mode: 0o600, ModTime: mt.Add(time.Second)},
		"qemu-server.conf.blob":   {Data: goldenData("conf", 301), Mode: 0o644, ModTime: mt, Sys: owner},
		"client.log.blob":         {Data: goldenData("log", 7), Mode: 0o644, ModTime: mt},
	}
	ct := fstest.MapFS{
		"index.json.blob":    {Data: []byte(`{"backup-type":"ct"}`), Mode: 0o644, ModTime: mt},
		"root.mpxar.didx":    {Data: goldenData("meta", 4096+3*40), Mode: 0o640, ModTime: mt},
		"root.ppxar.didx":    {Data: goldenRepeat("payload", 300<<10), Mode: 0o640, ModTime: mt},
		"catalog.pcat1.didx": {Data: goldenData("cat", 4096+40), Mode: 0o640, ModTime: mt},
		"pct.conf.blob":      {Data: nil, Mode: 0o644, ModTime: mt},
		"fw.conf.blob":       {Data: goldenData("fw", 33), Mode: 0o4755, ModTime: time.Unix(-1, 5)},
	}
	host := fstest.MapFS{"index.json.blob": {Data: []byte(`{}`), Mode: 0o644}}
	hostFiles := []string{"index.json.blob"}
	for i := range 40 {
		name := string(rune('a'+i%26)) + "-archive" + string(rune('0'+i/26)) + ".pxar.didx"
		host[name] = &fstest.MapFile{Data: goldenData(name, 4096+i*40), Mode: os.FileMode(0o600 | (i%8)<<3), ModTime: mt.Add(time.Duration(i) * time.Hour)}
		hostFiles = append(hostFiles, name)
	}
	odd := fstest.MapFS{
		"index.json.blob": {Data: []byte("{}"), Mode: 0o600 | 01000, ModTime: time.Unix(1<<40, 999999999)},
		"a.img.fidx":      {Data: goldenData("odd", 4096), Mode: 0o2700, ModTime: time.Unix(-1<<33, 1), Sys: &syscall.Stat_t{Uid: 1<<32 - 1, Gid: 1 << 31}},
	}
	big := fstest.MapFS{
		"index.json.blob": {Data: []byte("{}"), Mode: 0o644, ModTime: mt},
		"disk.img.fidx":   {Data: goldenRepeat("big", 700<<10), Mode: 0o644, ModTime: mt},
	}
	return []goldenSnapshot{
		{"vm", "vm/100/2024-06-05T12:00:00Z", vm,
			[]string{"index.json.blob", "drive-scsi0.img.fidx", "drive-efidisk0.img.fidx", "qemu-server.conf.blob", "client.log.blob"}, 0},
		{"ct", "ct/7/2024-06-05T12:00:00Z", ct,
			[]string{"index.json.blob", "root.mpxar.didx", "root.ppxar.didx", "catalog.pcat1.didx", "pct.conf.blob", "fw.conf.blob"}, 0},
		{"host", "host/web/2024-06-05T12:00:00Z", host, hostFiles, 0},
		{"namespace", "ns/a/ns/b/vm/100/2024-06-05T12:00:00Z", vm, []string{"index.json.blob", "drive-scsi0.img.fidx"}, 0},
		{"empty", "host/empty/2024-06-05T12:00:00Z", fstest.MapFS{}, nil, 0},
		{"odd-metadata", "vm/1/2024-06-05T12:00:00Z", odd, []string{"index.json.blob", "a.img.fidx"}, 0},
		{"leom", "vm/2/2024-06-05T12:00:00Z", big, []string{"index.json.blob", "disk.img.fidx"}, 2},
	}
}

// compactTape is the tape file in a form fit for a golden file: every
// block's header and payload without the zero padding after it (checked
// to be zero), with the content header's UUID and ctime zeroed (checked
// against the UUID WriteSnapshotArchive returned and the clock).
func compactTape(t *testing.T, raw []byte, uuid UUID, before time.Time) []byte {
	t.Helper()
	if len(raw)%block.Size != 0 || len(raw) == 0 {
		t.Fatalf("tape file of %d bytes", len(raw))
	}
	var out []byte
	for off := 0; off < len(raw); off += block.Size {
		b := raw[off : off+block.Size]
		h, err := block.ParseHeader(b)
		if err != nil {
			t.Fatalf("block at %d: %v", off, err)
		}
		if pad := b[block.HeaderSize+h.Size:]; !bytes.Equal(pad, make([]byte, len(pad))) {
			t.Fatalf("block at %d: padding not zero", off)
		}
		out = append(out, b[:block.HeaderSize+h.Size]...)
	}
	ch := out[block.HeaderSize : block.HeaderSize+ContentHeaderSize]
	if UUID(ch[16:32]) != uuid {
		t.Fatalf("content header UUID %x, WriteSnapshotArchive returned %x", ch[16:32], uuid)
	}
	if ct := int64(binary.LittleEndian.Uint64(ch[32:40])); ct < before.Unix() || ct > time.Now().Unix() {
		t.Fatalf("content header ctime %d", ct)
	}
	clear(ch[16:40])
	return out
}

// TestSnapshotArchiveGolden fixes the bytes on tape of snapshot archives:
// they must not change (PBS reads them; older cairn tapes hold them).
// Run with -update only for an intended format change.
func TestSnapshotArchiveGolden(t *testing.T) {
	for _, g := range goldenSnapshots() {
		t.Run(g.name, func(t *testing.T) {
			m, w := newTape(g.leomAt)
			before := time.Now()
			uuid, done, err := WriteSnapshotArchive(w, "store1", g.snapshot, g.fsys, g.files)
			if err != nil || done != (g.leomAt == 0) {
				t.Fatalf("write: done=%v %v", done, err)
			}
			got := compactTape(t, m.buf.Bytes(), uuid, before)
			path := filepath.Join("testdata", "snapshot", g.name+".tape")
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Fatalf("tape bytes differ from %s (%d bytes, golden %d) from offset %d", path, len(got), len(want), i)
			}
			if g.leomAt == 0 {
				checkGoldenRead(t, m, g)
			}
		})
	}
}

// checkGoldenRead reads the archive back: the files, in order, with
// their content and metadata.
func checkGoldenRead(t *testing.T, m *memTape, g goldenSnapshot) {
	t.Helper()
	s, err := NewSnapshotArchiveReader(m.reader(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		f, err := s.Next()
		if err == io.EOF && i == len(g.files) {
			return
		}
		if err != nil || i >= len(g.files) || f.Name != g.files[i] {
			t.Fatalf("file %d: %+v %v", i, f, err)
		}
		mf := g.fsys[f.Name]
		b, err := io.ReadAll(s)
		if err != nil || !bytes.Equal(b, mf.Data) || f.Mode&0o7777 != uint32(fsModeBits(mf.Mode)) {
			t.Fatalf("%s: %d bytes, mode %o: %v", f.Name, len(b), f.Mode, err)
		}
		if !mf.ModTime.IsZero() && !f.Mtime.Equal(mf.ModTime) {
			t.Fatalf("%s: mtime %v, want %v", f.Name, f.Mtime, mf.ModTime)
		}
	}
}

// fsModeBits is the unix permission and special bits of m.
func fsModeBits(m os.FileMode) uint32 {
	bits := uint32(m.Perm())
	for special, unix := range map[os.FileMode]uint32{os.ModeSetuid: 0o4000, os.ModeSetgid: 0o2000, os.ModeSticky: 0o1000} {
		if m&special != 0 {
			bits |= unix
		}
	}
	return bits
}

// BenchmarkSnapshotArchive writes and reads back a snapshot archive of a
// VM with a 4 TiB disk at 4 MiB chunks (a 32 MiB fixed index) and blobs.
func BenchmarkSnapshotArchive(b *testing.B) {
	mt := time.Date(2024, 6, 5, 12, 0, 0, 0, time.UTC)
	fsys := fstest.MapFS{
		"index.json.blob":       {Data: goldenData("index", 2000), Mode: 0o644, ModTime: mt},
		"drive-scsi0.img.fidx":  {Data: goldenRepeat("scsi0", 4096+(1<<20)*32), Mode: 0o644, ModTime: mt},
		"qemu-server.conf.blob": {Data: goldenData("conf", 500), Mode: 0o644, ModTime: mt},
		"client.log.blob":       {Data: goldenData("log", 100), Mode: 0o644, ModTime: mt},
	}
	files := []string{"index.json.blob", "drive-scsi0.img.fidx", "qemu-server.conf.blob", "client.log.blob"}
	var size int
	for _, f := range files {
		size += len(fsys[f].Data)
	}
	b.Run("write", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			w := block.NewWriter(discardTape{})
			if _, done, err := WriteSnapshotArchive(w, "s", "vm/1/2024-06-05T12:00:00Z", fsys, files); err != nil || !done {
				b.Fatal(done, err)
			}
		}
	})
	m, w := newTape(0)
	if _, _, err := WriteSnapshotArchive(w, "s", "vm/1/2024-06-05T12:00:00Z", fsys, files); err != nil {
		b.Fatal(err)
	}
	b.Run("read", func(b *testing.B) {
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			r, err := block.NewReader(block.StreamSource(bytes.NewReader(m.buf.Bytes())), "mem")
			if err != nil {
				b.Fatal(err)
			}
			s, err := NewSnapshotArchiveReader(r)
			if err != nil {
				b.Fatal(err)
			}
			for {
				if _, err := s.Next(); err == io.EOF {
					break
				} else if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// discardTape is a Device that drops its blocks.
type discardTape struct{}

func (discardTape) WriteBlock([]byte) (bool, error) { return false, nil }
func (discardTape) WriteFilemark() error            { return nil }
