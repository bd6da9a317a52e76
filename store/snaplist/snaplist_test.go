package snaplist

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
)

func TestSnapshotGroups(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	rows := []Row{
		{Group: "vm/1", Time: "t1", Finished: true, Size: 10, StoredSize: n(4), Verified: "ok"},
		{Group: "vm/1", Time: "t2", Finished: true, Size: 10, StoredSize: n(1), Verified: "failed"},
		{Group: "vm/1", Time: "t3"},
		{Group: "vm/2", Time: "t1", Finished: true, Size: 7, Verified: NotVerified},
		{Group: "vm/3", Time: "t1", Finished: true, Size: 7, Verified: NotVerified},
		{Group: "vm/3", Time: "t2", Finished: true, Size: 7, StoredSize: n(3), Verified: NotVerified},
	}
	g := Groups(rows)
	if len(g) != 3 || g[0].Snapshots != 3 || g[0].Newest != "t2" || g[0].Size != 20 || g[0].StoredSize != 5 || g[0].StoredUnknown != 0 {
		t.Fatalf("groups %+v", g)
	}
	for i, want := range []string{"vm/1: 3 snapshot(s), newest t2, 20 B logical, 5 B newly stored by its backups",
		"vm/2: 1 snapshot(s), newest t1, 7 B logical, unknown newly stored by its backups",
		"vm/3: 2 snapshot(s), newest t2, 14 B logical, 3 B + unknown (1 snapshot(s) without upload stats) newly stored by its backups"} {
		if got := g[i].String(); got != want {
			t.Errorf("group %d: %q, want %q", i, got, want)
		}
	}
	var out bytes.Buffer
	if err := Write(&out, rows, nil, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"verify ok", "verify failed", "UNFINISHED", "not verified"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("listing lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "verify not verified") {
		t.Errorf("listing says %q:\n%s", "verify not verified", out.String())
	}
	for in, want := range map[string]string{"one": "one", " two\nlines ": "two …", strings.Repeat("x", 70): strings.Repeat("x", 59) + "…"} {
		if got := store.FirstLine(in, 60); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestArchiveRows: each archive with its kind, storage and files' sizes;
// a split file archive's text names both streams.
func TestArchiveRows(t *testing.T) {
	m := &store.Manifest{Files: []store.FileInfo{{Filename: "root.mpxar.didx", Size: 10}, {Filename: "root.ppxar.didx", Size: 20},
		{Filename: "disk.img.fidx", Size: 5}}}
	rows := ArchiveRows(m)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	var b bytes.Buffer
	if err := WriteArchives(&b, rows); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"disk.img                 image               5 B  fixed index\n",
		"root.pxar                file_archive       30 B  split: metadata 10 B, payload 20 B\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
