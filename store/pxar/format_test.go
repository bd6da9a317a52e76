package pxar

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"slices"
	"testing"
)

// The item type constants are SipHash-2-4 of these strings with the
// format's keys (pxar's examples/mk-format-hashes.rs): test vectors for
// HashFilename and a check of every constant.
func TestFormatHashes(t *testing.T) {
	cases := []struct {
		s    string
		want uint64
	}{
		{"__PROXMOX_FORMAT_VERSION__", TypeFormatVersion},
		{"__PROXMOX_FORMAT_ENTRY_V2__", TypeEntry},
		{"__PROXMOX_FORMAT_ENTRY__", TypeEntryV1},
		{"__PROXMOX_FORMAT_PRELUDE__", TypePrelude},
		{"__PROXMOX_FORMAT_FILENAME__", TypeFilename},
		{"__PROXMOX_FORMAT_SYMLINK__", TypeSymlink},
		{"__PROXMOX_FORMAT_DEVICE__", TypeDevice},
		{"__PROXMOX_FORMAT_XATTR__", TypeXattr},
		{"__PROXMOX_FORMAT_ACL_USER__", TypeACLUser},
		{"__PROXMOX_FORMAT_ACL_GROUP__", TypeACLGroup},
		{"__PROXMOX_FORMAT_ACL_GROUP_OBJ__", TypeACLGroupObj},
		{"__PROXMOX_FORMAT_ACL_DEFAULT__", TypeACLDefault},
		{"__PROXMOX_FORMAT_ACL_DEFAULT_USER__", TypeACLDefaultUser},
		{"__PROXMOX_FORMAT_ACL_DEFAULT_GROUP__", TypeACLDefaultGroup},
		{"__PROXMOX_FORMAT_FCAPS__", TypeFCaps},
		{"__PROXMOX_FORMAT_QUOTA_PROJID__", TypeQuotaProjID},
		{"__PROXMOX_FORMAT_HARDLINK__", TypeHardlink},
		{"__PROXMOX_FORMAT_PXAR_PAYLOAD__", TypePayload},
		{"__PROXMOX_FORMAT_PXAR_PAYLOAD_REF__", TypePayloadRef},
		{"__PROXMOX_FORMAT_GOODBYE__", TypeGoodbye},
		{"__PROXMOX_FORMAT_PXAR_GOODBYE_TAIL_MARKER__", GoodbyeTailMarker},
		{"__PROXMOX_FORMAT_PXAR_PAYLOAD_START_MARKER__", TypePayloadStartMarker},
		{"__PROXMOX_FORMAT_PXAR_PAYLOAD_TAIL_MARKER__", TypePayloadTailMarker},
	}
	for _, c := range cases {
		if got := HashFilename(c.s); got != c.want {
			t.Errorf("HashFilename(%q) = %#x, want %#x", c.s, got, c.want)
		}
	}
}

// Reference vectors of the SipHash paper (key 00..0f, message 00..n-1).
func TestSipHashPaperVectors(t *testing.T) {
	k0 := binary.LittleEndian.Uint64([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	k1 := binary.LittleEndian.Uint64([]byte{8, 9, 10, 11, 12, 13, 14, 15})
	want := map[int]uint64{0: 0x726fdb47dd0e0e31, 1: 0x74f839c593dc67fd, 7: 0xab0200f58b01d137, 8: 0x93f5f5799a932462, 15: 0xa129ca6149be45e5}
	for n, w := range want {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(i)
		}
		if got := sipHash24(k0, k1, string(msg)); got != w {
			t.Errorf("len %d: got %#x want %#x", n, got, w)
		}
	}
}

// Expected permutations from pxar's binary_tree_array test.
func TestBSTPermute(t *testing.T) {
	cases := map[int][]int{
		0:  {},
		1:  {0},
		2:  {1, 0},
		3:  {1, 0, 2},
		4:  {2, 1, 3, 0},
		5:  {3, 1, 4, 0, 2},
		6:  {3, 1, 5, 0, 2, 4},
		7:  {3, 1, 5, 0, 2, 4, 6},
		8:  {4, 2, 6, 1, 3, 5, 7, 0},
		9:  {5, 3, 7, 1, 4, 6, 8, 0, 2},
		10: {6, 3, 8, 1, 5, 7, 9, 0, 2, 4},
		11: {7, 3, 9, 1, 5, 8, 10, 0, 2, 4, 6},
		12: {7, 3, 10, 1, 5, 9, 11, 0, 2, 4, 6, 8},
		13: {7, 3, 11, 1, 5, 9, 12, 0, 2, 4, 6, 8, 10},
		14: {7, 3, 11, 1, 5, 9, 13, 0, 2, 4, 6, 8, 10, 12},
		15: {7, 3, 11, 1, 5, 9, 13, 0, 2, 4, 6, 8, 10, 12, 14},
		16: {8, 4, 12, 2, 6, 10, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0},
		17: {9, 5, 13, 3, 7, 11, 15, 1, 4, 6, 8, 10, 12, 14, 16, 0, 2},
	}
	for n, want := range cases {
		got := make([]int, n)
		for i := range got {
			got[i] = -1
		}
		bstPermute(n, func(src, dst int) { got[dst] = src })
		if !slices.Equal(got, want) {
			t.Errorf("n=%d: got %v want %v", n, got, want)
		}
	}
	// Larger sizes: a permutation that is a valid search tree.
	for n := 18; n < 1000; n++ {
		tree := make([]int, n)
		seen := make([]bool, n)
		bstPermute(n, func(src, dst int) { tree[dst] = src; seen[src] = true })
		for i := range n {
			if !seen[i] {
				t.Fatalf("n=%d: element %d not placed", n, i)
			}
			if l := 2*i + 1; l < n && tree[l] > tree[i] {
				t.Fatalf("n=%d: left child of %d larger", n, i)
			}
			if r := 2*i + 2; r < n && tree[r] < tree[i] {
				t.Fatalf("n=%d: right child of %d smaller", n, i)
			}
		}
	}
}

// Independent little-endian builders for the expected bytes.
func u64s(v ...uint64) []byte {
	var b []byte
	for _, x := range v {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

func stat40(mode uint64, uid, gid uint32, secs int64, nanos uint32) []byte {
	b := u64s(mode, 0)
	b = binary.LittleEndian.AppendUint32(b, uid)
	b = binary.LittleEndian.AppendUint32(b, gid)
	b = binary.LittleEndian.AppendUint64(b, uint64(secs))
	b = binary.LittleEndian.AppendUint32(b, nanos)
	return binary.LittleEndian.AppendUint32(b, 0)
}

func item(typ uint64, content ...byte) []byte {
	return append(u64s(typ, uint64(16+len(content))), content...)
}

// TestEncoderBytes checks the encoder's output for a root directory with
// a file "a" ("hi") and a symlink "b" -> "a" against bytes laid out by
// hand from pxar's format definition, split and single-stream.
func TestEncoderBytes(t *testing.T) {
	rootStat := stat40(ModeIFDIR|0o755, 0, 0, 1430487000, 5)
	fileStat := stat40(ModeIFREG|0o644, 1000, 100, 1430487001, 999999999)
	linkStat := stat40(ModeIFLNK|0o777, 0, 0, -2, 7)
	root := Metadata{Stat: Stat{Mode: ModeIFDIR | 0o755, Mtime: Timestamp{1430487000, 5}}}
	file := Metadata{Stat: Stat{Mode: ModeIFREG | 0o644, UID: 1000, GID: 100, Mtime: Timestamp{1430487001, 999999999}}}
	link := Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777, Mtime: Timestamp{-2, 7}}}

	// goodbye items sorted by hash, two items: tree order is [larger, smaller].
	goodbye := func(gbOfs uint64, entryOfs uint64, a, b [2]uint64) []byte {
		items := [][3]uint64{{HashFilename("a"), gbOfs - a[0], a[1]}, {HashFilename("b"), gbOfs - b[0], b[1]}}
		if items[0][0] < items[1][0] {
			items[0], items[1] = items[1], items[0]
		}
		content := u64s(items[0][0], items[0][1], items[0][2], items[1][0], items[1][1], items[1][2])
		content = append(content, u64s(GoodbyeTailMarker, gbOfs-entryOfs, 16+3*24)...)
		return item(TypeGoodbye, content...)
	}

	t.Run("split", func(t *testing.T) {
		var want []byte
		want = append(want, item(TypeFormatVersion, u64s(2)...)...)                                     // 0
		want = append(want, item(TypeEntry, rootStat...)...)                                            // 24
		want = append(want, item(TypeFilename, 'a', 0)...)                                              // 80
		want = append(want, item(TypeEntry, fileStat...)...)                                            // 98
		want = append(want, item(TypePayloadRef, u64s(16, 2)...)...)                                    // 154
		want = append(want, item(TypeFilename, 'b', 0)...)                                              // 186
		want = append(want, item(TypeEntry, linkStat...)...)                                            // 204
		want = append(want, item(TypeSymlink, 'a', 0)...)                                               // 260
		want = append(want, goodbye(278, 0, [2]uint64{80, 186 - 80 + 2}, [2]uint64{186, 278 - 186})...) // 278
		wantPayload := append(append(item(TypePayloadStartMarker), item(TypePayload, 'h', 'i')...), item(TypePayloadTailMarker)...)

		var meta, payload bytes.Buffer
		e, err := NewEncoder(&meta, &payload, &root)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.AddFile("a", &file, 2, bytes.NewReader([]byte("hi"))); err != nil {
			t.Fatal(err)
		}
		if err := e.AddSymlink("b", &link, "a"); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(meta.Bytes(), want) {
			t.Errorf("metadata stream differs:\n got %x\nwant %x", meta.Bytes(), want)
		}
		if !bytes.Equal(payload.Bytes(), wantPayload) {
			t.Errorf("payload stream differs:\n got %x\nwant %x", payload.Bytes(), wantPayload)
		}
		checkTiny(t, meta.Bytes(), payload.Bytes())
	})

	t.Run("single", func(t *testing.T) {
		var want []byte
		want = append(want, item(TypeEntry, rootStat...)...) // 0
		want = append(want, item(TypeFilename, 'a', 0)...)   // 56
		want = append(want, item(TypeEntry, fileStat...)...) // 74
		want = append(want, item(TypePayload, 'h', 'i')...)  // 130
		want = append(want, item(TypeFilename, 'b', 0)...)   // 148
		want = append(want, item(TypeEntry, linkStat...)...) // 166
		want = append(want, item(TypeSymlink, 'a', 0)...)    // 222
		want = append(want, goodbye(240, 0, [2]uint64{56, 148 - 56}, [2]uint64{148, 240 - 148})...)

		var meta bytes.Buffer
		e, err := NewEncoder(&meta, nil, &root)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.AddFile("a", &file, 2, bytes.NewReader([]byte("hi"))); err != nil {
			t.Fatal(err)
		}
		if err := e.AddSymlink("b", &link, "a"); err != nil {
			t.Fatal(err)
		}
		if err := e.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(meta.Bytes(), want) {
			t.Errorf("archive differs:\n got %x\nwant %x", meta.Bytes(), want)
		}
		checkTiny(t, meta.Bytes(), nil)
	})
}

// checkTiny reads the tiny archive of TestEncoderBytes back.
func checkTiny(t *testing.T, meta, payload []byte) {
	t.Helper()
	ctx := context.Background()
	var pr io.ReaderAt
	if payload != nil {
		pr = bytes.NewReader(payload)
	}
	a, err := NewAccessor(ctx, bytes.NewReader(meta), int64(len(meta)), pr, int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := a.LookupPath(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Open(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if string(got) != "hi" || f.Metadata.Stat.UID != 1000 || f.Metadata.Stat.Mtime.Nanos != 999999999 {
		t.Errorf("file a: content %q stat %+v", got, f.Metadata.Stat)
	}
	l, err := a.Lookup(ctx, a.Root(), "b")
	if err != nil || l.Kind != KindSymlink || l.Target != "a" || l.Metadata.Stat.Mtime.Secs != -2 {
		t.Errorf("symlink b: %+v, %v", l, err)
	}
}
