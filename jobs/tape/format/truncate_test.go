package format

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/fstest"
	"time"
)

// Every truncation of a label, and of a snapshot archive's stream, fails;
// a snapshot archive the writer marked incomplete fails as incomplete.
func TestTapeFilesTruncatedEverywhere(t *testing.T) {
	m, w := newTape(0)
	if err := WriteMediaLabel(w, MediaLabel{UUID: NewUUID(), LabelText: "T1", Ctime: 1}); err != nil {
		t.Fatal(err)
	}
	label := payloadOf(t, m)
	m, w = newTape(0)
	if err := WriteMediaSetLabel(w, MediaSetLabel{Pool: "p", UUID: NewUUID(), SeqNr: 1}); err != nil {
		t.Fatal(err)
	}
	set := payloadOf(t, m)
	for n := 0; n < len(label); n++ {
		if _, err := ReadMediaLabel(newByteTape(label[:n], false)); err == nil {
			t.Fatalf("media label cut to %d bytes read", n)
		}
	}
	for n := 0; n < len(set); n++ {
		if _, err := ReadMediaSetLabel(newByteTape(set[:n], false)); err == nil {
			t.Fatalf("media set label cut to %d bytes read", n)
		}
	}
	mt := time.Unix(1700000000, 0)
	fsys := fstest.MapFS{"a.blob": {Data: []byte("abc"), Mode: 0o644, ModTime: mt}, "b.blob": {Data: nil, Mode: 0o644, ModTime: mt}}
	m, w = newTape(0)
	if _, _, err := WriteSnapshotArchive(w, "s", "vm/1/2024-06-05T12:00:00Z", fsys, []string{"a.blob", "b.blob"}); err != nil {
		t.Fatal(err)
	}
	snap := payloadOf(t, m)
	for n := 0; n < len(snap); n++ {
		for _, incomplete := range []bool{false, true} {
			_, _, err := readAllSnapshot(newByteTape(snap[:n], incomplete), len(snap))
			if err == nil || err == errFuzz {
				t.Fatalf("snapshot archive cut to %d bytes: %v", n, err)
			}
			if incomplete && n > ContentHeaderSize+100 && !errors.Is(err, ErrIncomplete) && !errors.Is(err, ErrBadHeader) {
				t.Fatalf("snapshot archive cut to %d bytes, marked incomplete: %v", n, err)
			}
		}
	}
}

// Claimed sizes far beyond the input fail before allocating them: a
// content header's JSON size, a chunk archive entry's size.
func TestTapeHugeClaims(t *testing.T) {
	h := NewContentHeader(MagicMediaLabel, 10)
	b, _ := h.AppendBinary(nil)
	for _, size := range []uint32{maxJSONHeader + 1, 1<<32 - 1} {
		binary.LittleEndian.PutUint32(b[40:], size)
		if _, _, err := ReadContentHeader(bytes.NewReader(b)); !errors.Is(err, ErrBadHeader) {
			t.Fatalf("JSON header of %d bytes: %v", size, err)
		}
	}
	m, w := newTape(0)
	a, err := NewChunkArchiveWriter(w, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	c := makeChunks(t, 1, 100)[0]
	a.WriteChunk(c.digest, c.blob)
	a.Finish()
	good := payloadOf(t, m)
	at := bytes.Index(good, MagicChunkEntry[:]) + 40
	for _, size := range []uint64{1 << 62, 1<<64 - 1, 128<<20 + 1} {
		bad := bytes.Clone(good)
		binary.LittleEndian.PutUint64(bad[at:], size)
		r, err := NewChunkArchiveReader(newByteTape(bad, false))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := r.Next(nil); !errors.Is(err, ErrCorrupt) || err == io.EOF {
			t.Fatalf("entry of %d bytes: %v", size, err)
		}
	}
	// An entry of the largest size on a stream that ends after a few
	// bytes is a torn tail, read without allocating what it claims.
	bad := bytes.Clone(good)
	binary.LittleEndian.PutUint64(bad[at:], 128<<20)
	r, err := NewChunkArchiveReader(newByteTape(bad, false))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, _, err := r.Next(nil); err != io.EOF {
		t.Fatalf("entry of 128 MiB in %d bytes: %v", len(bad), err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Fatalf("entry claiming 128 MiB allocated %d bytes", grew)
	}
}
