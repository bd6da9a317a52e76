package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
)

func snapshotFS() (fstest.MapFS, []string) {
	mt := time.Date(2024, 6, 5, 12, 0, 0, 123456789, time.UTC)
	fsys := fstest.MapFS{
		"index.json.blob":       {Data: []byte(`{"backup-type":"vm"}`), Mode: 0o644, ModTime: mt},
		"drive-scsi0.img.fidx":  {Data: bytes.Repeat([]byte{7}, 4096+3*32), Mode: 0o600, ModTime: mt},
		"root.pxar.didx":        {Data: bytes.Repeat([]byte{9}, 600<<10), Mode: 0o640, ModTime: mt},
		"qemu-server.conf.blob": {Data: nil, Mode: 0o644, ModTime: mt},
	}
	return fsys, []string{"index.json.blob", "drive-scsi0.img.fidx", "root.pxar.didx", "qemu-server.conf.blob"}
}

func readSnapshot(t *testing.T, m *memTape) (*SnapshotArchiveReader, map[string][]byte, []string, error) {
	t.Helper()
	s, err := NewSnapshotArchiveReader(m.reader(t))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]byte{}
	var order []string
	for {
		f, err := s.Next()
		if err == io.EOF {
			return s, got, order, nil
		}
		if err != nil {
			return s, got, order, err
		}
		if f.Name == "root.pxar.didx" && (f.Mode != 0o100640 || f.Mtime.Nanosecond() != 123456789) {
			t.Fatalf("metadata of %s: mode %o mtime %v", f.Name, f.Mode, f.Mtime)
		}
		b, err := io.ReadAll(s)
		if err != nil {
			return s, got, order, err
		}
		if int64(len(b)) != f.Size {
			t.Fatalf("%s: %d bytes, header says %d", f.Name, len(b), f.Size)
		}
		got[f.Name] = b
		order = append(order, f.Name)
	}
}

func TestSnapshotArchiveRoundTrip(t *testing.T) {
	fsys, files := snapshotFS()
	for _, snap := range []string{"vm/100/2024-06-05T12:00:00Z", "ns/a/ns/b/ct/7/2024-06-05T12:00:00Z"} {
		m, w := newTape(0)
		uuid, done, err := WriteSnapshotArchive(w, "store1", snap, fsys, files)
		if err != nil || !done {
			t.Fatalf("write: %v %v", done, err)
		}
		s, got, order, err := readSnapshot(t, m)
		if err != nil {
			t.Fatal(err)
		}
		if s.Snapshot != snap || s.Store != "store1" || s.Header.UUID != uuid {
			t.Fatalf("header: %+v", s)
		}
		wantMagic := MagicSnapshotArchive
		if snap[:3] == "ns/" {
			wantMagic = MagicSnapshotNS
		}
		if s.Header.ContentMagic != wantMagic {
			t.Fatalf("%s: content magic %s", snap, ContentName(s.Header.ContentMagic))
		}
		if !slices.Equal(order, files) {
			t.Fatalf("order %v", order)
		}
		for _, name := range files {
			if !bytes.Equal(got[name], fsys[name].Data) {
				t.Fatalf("%s differs", name)
			}
		}
	}
}

// Skipping file contents with Next works too.
func TestSnapshotArchiveSkip(t *testing.T) {
	fsys, files := snapshotFS()
	m, w := newTape(0)
	if _, _, err := WriteSnapshotArchive(w, "s", "vm/1/2024-01-01T00:00:00Z", fsys, files); err != nil {
		t.Fatal(err)
	}
	s, _ := NewSnapshotArchiveReader(m.reader(t))
	n := 0
	for {
		_, err := s.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != len(files) {
		t.Fatalf("%d files", n)
	}
}

func TestSnapshotArchiveLEOM(t *testing.T) {
	fsys, files := snapshotFS()
	m, w := newTape(2)
	_, done, err := WriteSnapshotArchive(w, "s", "vm/1/2024-01-01T00:00:00Z", fsys, files)
	if err != nil || done {
		t.Fatalf("write at LEOM: done=%v %v", done, err)
	}
	if _, _, _, err := readSnapshot(t, m); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("read incomplete archive: %v", err)
	}
}

func TestSnapshotArchiveBadInput(t *testing.T) {
	fsys, files := snapshotFS()
	_, w := newTape(0)
	if _, _, err := WriteSnapshotArchive(w, "s", "vm/1/x", fsys, append(files, "missing.blob")); err == nil {
		t.Fatal("missing file accepted")
	}
	_, w = newTape(0)
	fsys["../evil"] = &fstest.MapFile{Data: []byte("x")}
	if _, _, err := WriteSnapshotArchive(w, "s", "vm/1/x", fsys, []string{"../evil"}); err == nil {
		t.Fatal("bad file name accepted")
	}

	fsys, files = snapshotFS()
	m, w := newTape(0)
	WriteSnapshotArchive(w, "s", "vm/1/x", fsys, files)
	good := m.buf.Bytes()
	tail := bytes.LastIndex(good, binary.LittleEndian.AppendUint64(nil, pxar.TypeGoodbye))
	payload := bytes.Index(good, binary.LittleEndian.AppendUint64(nil, pxar.TypePayload))
	for _, size := range []uint64{1<<64 - 1, 1<<63 + 16} { // content sizes that are negative as int64
		t.Run(fmt.Sprintf("payload size %d", size), func(t *testing.T) {
			bad := &memTape{}
			bad.buf.Write(good)
			binary.LittleEndian.PutUint64(bad.buf.Bytes()[payload+8:], size)
			if _, _, _, err := readSnapshot(t, bad); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "payload of") {
				t.Fatalf("payload size %d: %v", size, err)
			}
		})
	}
	for name, off := range map[string]int{
		"goodbye item":   tail + 16 + 8,
		"file name byte": bytes.Index(good, []byte("root.pxar.didx")),
		"entry type":     bytes.Index(good, binary.LittleEndian.AppendUint64(nil, pxar.TypePayload)),
	} {
		t.Run(name, func(t *testing.T) {
			bad := &memTape{}
			bad.buf.Write(good)
			bad.buf.Bytes()[off] ^= 0x10
			if _, _, _, err := readSnapshot(t, bad); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("corrupt %s: %v", name, err)
			}
		})
	}
}
