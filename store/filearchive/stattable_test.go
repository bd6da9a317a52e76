package filearchive

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/pxar"
)

func TestStatTableRoundTrip(t *testing.T) {
	recs := []statRecord{
		{ID: 40, Ino: 12, Ctime: pxar.Timestamp{Secs: 1700000000, Nanos: 5}, Trusted: true},
		{ID: 41, Ino: 1 << 60, Ctime: pxar.Timestamp{Secs: -5, Nanos: 999999999}},
		{ID: 900, Ino: 0, Ctime: pxar.Timestamp{Secs: 1 << 40}, Trusted: true},
		{ID: 905, Ino: 1<<64 - 1, Digest: [digestSize]byte{1, 2, 3, 15: 16}, HasDigest: true},
		{ID: 906, Ino: 7, Trusted: true, Digest: [digestSize]byte{0xff}, HasDigest: true},
	}
	var b bytes.Buffer
	w, err := newStatWriter(&b)
	must(t, err)
	for i := range recs {
		must(t, w.add(&recs[i]))
	}
	must(t, w.flush())
	if err := w.add(&statRecord{ID: 906}); err == nil {
		t.Fatal("writer took a record out of order")
	}
	r, err := newStatReader("t", bytes.NewReader(b.Bytes()))
	must(t, err)
	for _, c := range []struct {
		id    uint64
		found int // index into recs, -1 for none
	}{{1, -1}, {40, 0}, {40, 0}, {41, 1}, {500, -1}, {900, 2}, {905, 3}, {906, 4}, {907, -1}, {40, -1}} {
		got, ok, err := r.find(c.id)
		must(t, err)
		var want statRecord
		if c.found >= 0 {
			want = recs[c.found]
			want.Ctime.Nanos = 0 // versions 2 and 3 keep seconds
		}
		if ok != (c.found >= 0) || (ok && got != want) {
			t.Errorf("find(%d) = %+v %v, want record %d", c.id, got, ok, c.found)
		}
	}
}

// TestStatTableCorrupt: every kind of damage is an error naming the
// table and the offset of the bad record.
func TestStatTableCorrupt(t *testing.T) {
	good := func() []byte {
		var b bytes.Buffer
		w, _ := newStatWriter(&b)
		w.add(&statRecord{ID: 10, Ino: 3})
		w.flush()
		return b.Bytes()
	}()
	rec := good[len(statMagic):]
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"magic", append([]byte("cairnST\x04"), rec...), "magic"},
		{"empty", nil, "magic"},
		{"truncated record", good[:len(statMagic)+3], "offset 8"},
		{"truncated digest", append(statMagic[:], append([]byte{rec[0] | recDigest}, rec[1:]...)...), "offset 8"},
		{"bad flags", append(statMagic[:], append([]byte{0x80}, rec[1:]...)...), "offset 8"},
		{"id step 0", append(statMagic[:], append([]byte{rec[0], 0}, rec[2:]...)...), "offset 8"},
		{"nanoseconds (version 1)", append(statMagicV1[:], rec[0], 10, 3, 0, 0xff, 0xff, 0xff, 0xff, 0x0f), "offset 8"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := newStatReader("root.pxar.stat.didx", bytes.NewReader(c.data))
			if err == nil {
				_, _, err = r.find(10)
			}
			if !errors.Is(err, ErrBadStatTable) || !strings.Contains(err.Error(), "root.pxar.stat.didx") ||
				!strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one naming the table and %q", err, c.want)
			}
		})
	}
}

// Every truncation of a stat table fails or, cut at a record boundary,
// reads as its first records; an ID step that overflows is refused.
func TestStatTableTruncatedEverywhere(t *testing.T) {
	var b bytes.Buffer
	w, _ := newStatWriter(&b)
	recs := []statRecord{{ID: 1, Ino: 3}, {ID: 5, Ino: 1 << 40, Trusted: true}, {ID: 300, Ino: 7}}
	for i := range recs {
		w.add(&recs[i])
	}
	w.flush()
	data := b.Bytes()
	for n := 0; n < len(data); n++ {
		r, err := newStatReader("t", bytes.NewReader(data[:n]))
		for _, want := range recs {
			if err != nil {
				break
			}
			var got statRecord
			var ok bool
			if got, ok, err = r.find(want.ID); err == nil && ok && got != want {
				t.Fatalf("cut to %d bytes: record %+v, want %+v", n, got, want)
			}
		}
		if err != nil && !errors.Is(err, ErrBadStatTable) {
			t.Fatalf("cut to %d bytes: %v", n, err)
		}
	}
	over := append(statMagic[:], data[len(statMagic):]...)
	over = append(over, 0)                     // flags
	over = binary.AppendUvarint(over, 1<<64-1) // ID step past 2^64
	over = binary.AppendVarint(over, 1)        // ino step
	over = binary.AppendVarint(over, 0)        // ctime step
	r, _ := newStatReader("t", bytes.NewReader(over))
	if _, _, err := r.find(1 << 63); !errors.Is(err, ErrBadStatTable) {
		t.Fatalf("overflowing ID step: %v", err)
	}
}

// TestStatTableV1 reads a table of cairn's first version: absolute
// inodes and 32-byte content digests, which are skipped.
func TestStatTableV1(t *testing.T) {
	b := statMagicV1[:]
	b = append(b, recTrusted|recDigest)
	b = binary.AppendUvarint(b, 10)    // ID
	b = binary.AppendUvarint(b, 1<<40) // ino
	b = binary.AppendVarint(b, 1700000000)
	b = binary.AppendUvarint(b, 7)
	b = append(b, bytes.Repeat([]byte{0xab}, 32)...)
	b = append(b, 0)
	b = binary.AppendUvarint(b, 5)  // ID 15
	b = binary.AppendUvarint(b, 12) // ino
	b = binary.AppendVarint(b, 1)
	b = binary.AppendUvarint(b, 0)
	r, err := newStatReader("t", bytes.NewReader(b))
	must(t, err)
	want := []statRecord{
		{ID: 10, Ino: 1 << 40, Ctime: pxar.Timestamp{Secs: 1700000000, Nanos: 7}, Trusted: true, HasNanos: true},
		{ID: 15, Ino: 12, Ctime: pxar.Timestamp{Secs: 1700000001}, HasNanos: true},
	}
	for _, w := range want {
		got, ok, err := r.find(w.ID)
		must(t, err)
		if !ok || got != w {
			t.Fatalf("find(%d) = %+v %v, want %+v", w.ID, got, ok, w)
		}
	}
	if _, err := newStatReader("t", bytes.NewReader(b[:len(b)-1])); err != nil {
		t.Fatal(err)
	}
	cut, _ := newStatReader("t", bytes.NewReader(b[:30]))
	if _, _, err := cut.find(10); !errors.Is(err, ErrBadStatTable) {
		t.Fatalf("cut digest: %v", err)
	}
}

// TestStatTableV2 reads a table of cairn's second version: no digests.
func TestStatTableV2(t *testing.T) {
	b := statMagicV2[:]
	b = append(b, recTrusted)
	b = binary.AppendUvarint(b, 10) // ID
	b = binary.AppendVarint(b, 1<<40)
	b = binary.AppendVarint(b, 1700000000)
	b = append(b, 0)
	b = binary.AppendUvarint(b, 5) // ID 15
	b = binary.AppendVarint(b, -3)
	b = binary.AppendVarint(b, 1)
	r, err := newStatReader("t", bytes.NewReader(b))
	must(t, err)
	want := []statRecord{
		{ID: 10, Ino: 1 << 40, Ctime: pxar.Timestamp{Secs: 1700000000}, Trusted: true},
		{ID: 15, Ino: 1<<40 - 3, Ctime: pxar.Timestamp{Secs: 1700000001}},
	}
	for _, w := range want {
		got, ok, err := r.find(w.ID)
		must(t, err)
		if !ok || got != w {
			t.Fatalf("find(%d) = %+v %v, want %+v", w.ID, got, ok, w)
		}
	}
}

// TestSameCtime: a version 2 record matches any ctime in its second, a
// version 1 record only its own nanosecond.
func TestSameCtime(t *testing.T) {
	v2 := statRecord{Ctime: pxar.Timestamp{Secs: 100}}
	v1 := statRecord{Ctime: pxar.Timestamp{Secs: 100, Nanos: 5}, HasNanos: true}
	for _, c := range []struct {
		ts     pxar.Timestamp
		v1, v2 bool
	}{
		{pxar.Timestamp{Secs: 100, Nanos: 5}, true, true},
		{pxar.Timestamp{Secs: 100, Nanos: 6}, false, true},
		{pxar.Timestamp{Secs: 101, Nanos: 5}, false, false},
	} {
		if v1.sameCtime(c.ts) != c.v1 || v2.sameCtime(c.ts) != c.v2 {
			t.Errorf("%+v: version 1 %v, version 2 %v", c.ts, v1.sameCtime(c.ts), v2.sameCtime(c.ts))
		}
	}
}
