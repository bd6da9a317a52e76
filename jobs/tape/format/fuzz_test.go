package format

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"testing/fstest"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// byteTape is a tape file's byte stream without its blocks, so that
// fuzzed inputs stay small; incomplete marks the stream as a writer
// cut short at the end of the tape would.
type byteTape struct {
	r          *bytes.Reader
	incomplete bool
}

func (b *byteTape) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *byteTape) Ended() bool                { return b.r.Len() == 0 }
func (b *byteTape) Incomplete() bool           { return b.incomplete && b.Ended() }
func (b *byteTape) SkipToEnd() (int64, error)  { return io.Copy(io.Discard, b.r) }

func newByteTape(data []byte, incomplete bool) *byteTape {
	return &byteTape{r: bytes.NewReader(data), incomplete: incomplete}
}

// payloadOf is the byte stream of a tape file written in memory.
func payloadOf(t *testing.T, m *memTape) []byte {
	b, err := io.ReadAll(m.reader(t))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzTapeLabels reads arbitrary media and media set label files: no
// panic, errors come back, a label that reads writes back to the same.
func FuzzTapeLabels(f *testing.F) {
	t := &testing.T{}
	m, w := newTape(0)
	if err := WriteMediaLabel(w, MediaLabel{UUID: NewUUID(), LabelText: "T00001", Ctime: 1700000000, Pool: "p"}); err != nil {
		f.Fatal(err)
	}
	f.Add(payloadOf(t, m))
	m, w = newTape(0)
	if err := WriteMediaSetLabel(w, MediaSetLabel{Pool: "p", UUID: NewUUID(), SeqNr: 3, Ctime: 1700000000, EncryptionKeyFingerprint: "ab:cd"}); err != nil {
		f.Fatal(err)
	}
	f.Add(payloadOf(t, m))
	f.Fuzz(func(t *testing.T, data []byte) {
		if l, err := ReadMediaLabel(newByteTape(data, false)); err == nil {
			m, w := newTape(0)
			if err := WriteMediaLabel(w, l); err != nil {
				t.Fatal(err)
			}
			if back, err := ReadMediaLabel(m.reader(t)); err != nil || back != l {
				t.Fatalf("media label %+v read back as %+v, %v", l, back, err)
			}
		}
		if l, err := ReadMediaSetLabel(newByteTape(data, false)); err == nil {
			m, w := newTape(0)
			if err := WriteMediaSetLabel(w, l); err != nil {
				t.Fatal(err)
			}
			if back, err := ReadMediaSetLabel(m.reader(t)); err != nil || back != l {
				t.Fatalf("media set label %+v read back as %+v, %v", l, back, err)
			}
		}
		if h, js, err := ReadContentHeader(newByteTape(data, false)); err == nil {
			if len(js) != int(h.Size) || len(js) > maxJSONHeader {
				t.Fatalf("header of %d bytes with %d JSON bytes", h.Size, len(js))
			}
			if _, err := OpenCatalogArchive(newByteTape(data[ContentHeaderSize+len(js):], false), h, js); err == nil && h.ContentMagic != MagicCatalogArchive && h.ContentMagic != MagicCatalogArchive0 {
				t.Fatalf("%s opened as a catalog archive", ContentName(h.ContentMagic))
			}
		}
	})
}

// FuzzChunkArchive reads arbitrary chunk archives: no panic, no entry
// larger than a blob, every chunk returned has a good CRC.
func FuzzChunkArchive(f *testing.F) {
	t := &testing.T{}
	m, w := newTape(0)
	a, err := NewChunkArchiveWriter(w, "store1", 0)
	if err != nil {
		f.Fatal(err)
	}
	for i, data := range [][]byte{[]byte("one"), bytes.Repeat([]byte("two "), 100), nil} {
		blob, err := chunk.EncodeBlob(nil, data, i == 1)
		if err != nil {
			f.Fatal(err)
		}
		if ok, err := a.WriteChunk(chunk.Sum(data), blob); !ok || err != nil {
			f.Fatal(ok, err)
		}
	}
	if err := a.Finish(); err != nil {
		f.Fatal(err)
	}
	good := payloadOf(t, m)
	f.Add(good, false)
	f.Add(good[:len(good)-5], true)
	f.Fuzz(func(t *testing.T, data []byte, incomplete bool) {
		a, err := NewChunkArchiveReader(newByteTape(data, incomplete))
		if err != nil {
			return
		}
		var buf []byte
		for n := 0; ; n++ {
			_, blob, err := a.Next(buf)
			if err != nil {
				return
			}
			if len(blob) > chunk.MaxBlobSize || len(blob) > len(data) {
				t.Fatalf("entry %d of %d bytes in %d bytes of input", n, len(blob), len(data))
			}
			if _, err := chunk.CheckCRC(blob); err != nil {
				t.Fatalf("entry %d returned with %v", n, err)
			}
			buf = blob
		}
	})
}

// FuzzSnapshotArchive reads arbitrary snapshot archives: no panic, file
// names valid and unique, no more content than the input holds, and a
// completely read archive writes back to one that reads the same.
func FuzzSnapshotArchive(f *testing.F) {
	t := &testing.T{}
	mt := time.Date(2024, 6, 5, 12, 0, 0, 123456789, time.UTC)
	fsys := fstest.MapFS{
		"index.json.blob": {Data: []byte(`{"backup-type":"vm"}`), Mode: 0o644, ModTime: mt},
		"a.img.fidx":      {Data: bytes.Repeat([]byte{7}, 100), Mode: 0o600, ModTime: mt},
		"b.conf.blob":     {Data: nil, Mode: 0o644, ModTime: mt},
	}
	names := []string{"index.json.blob", "a.img.fidx", "b.conf.blob"}
	for _, snap := range []string{"vm/100/2024-06-05T12:00:00Z", "ns/a/ct/7/2024-06-05T12:00:00Z"} {
		m, w := newTape(0)
		if _, done, err := WriteSnapshotArchive(w, "store1", snap, fsys, names); err != nil || !done {
			f.Fatal(done, err)
		}
		good := payloadOf(t, m)
		f.Add(good, false)
		f.Add(good[:len(good)-30], true)
	}
	f.Fuzz(func(t *testing.T, data []byte, incomplete bool) {
		files, s, err := readAllSnapshot(newByteTape(data, incomplete), len(data))
		if err != nil {
			if err == errFuzz {
				t.Fatal(s)
			}
			return
		}
		m, w := newTape(0)
		out := fstest.MapFS{}
		var order []string
		for _, f := range files {
			out[f.Name] = &fstest.MapFile{Data: f.data, Mode: 0o600, ModTime: time.Unix(0, 0)}
			order = append(order, f.Name)
		}
		if _, done, err := WriteSnapshotArchive(w, s.Store, s.Snapshot, out, order); err != nil || !done {
			t.Fatalf("write back: %v", err)
		}
		back, _, err := readAllSnapshot(newByteTape(payloadOf(t, m), false), 1<<30)
		if err != nil || len(back) != len(files) {
			t.Fatalf("read back %d of %d files: %v", len(back), len(files), err)
		}
		for i := range back {
			if back[i].Name != files[i].Name || !bytes.Equal(back[i].data, files[i].data) {
				t.Fatalf("file %d differs after a round trip", i)
			}
		}
	})
}

var errFuzz = io.ErrNoProgress

type readFile struct {
	SnapshotFile
	data []byte
}

// readAllSnapshot reads every file of a snapshot archive; it returns
// errFuzz (and the reason in place of the reader) when the reader breaks
// a promise.
func readAllSnapshot(tr TapeReader, limit int) ([]readFile, *SnapshotArchiveReader, error) {
	s, err := NewSnapshotArchiveReader(tr)
	if err != nil {
		return nil, nil, err
	}
	var files []readFile
	seen := map[string]bool{}
	total := 0
	for {
		sf, err := s.Next()
		if err == io.EOF {
			return files, s, nil
		}
		if err != nil {
			return nil, s, err
		}
		if seen[sf.Name] || checkFilename(sf.Name) != nil || sf.Size < 0 {
			return nil, &SnapshotArchiveReader{Snapshot: fmt.Sprintf("bad file %q of %d bytes (seen %v)", sf.Name, sf.Size, seen[sf.Name])}, errFuzz
		}
		seen[sf.Name] = true
		data, err := io.ReadAll(s)
		if err != nil {
			return nil, s, err
		}
		if total += len(data); total > limit || int64(len(data)) != sf.Size {
			return nil, &SnapshotArchiveReader{Snapshot: "content larger than the input"}, errFuzz
		}
		files = append(files, readFile{sf, data})
	}
}
