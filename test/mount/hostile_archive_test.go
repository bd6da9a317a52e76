package test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/test/e2e"
)

// duplicateTricks are the crafted archives whose root directory names an
// entry twice; the decoder refuses them for ls, cat, restore and the
// mount alike, naming the directory and the name.
var duplicateTricks = map[string]string{
	"symlink then directory":      "a",
	"symlink to a file then file": "a",
	"file then directory":         "a",
	"directory then file":         "a",
	"directory twice":             "a",
	"symlink then device":         "n",
}

// hostileArchiveStore writes every duplicate-name trick as a snapshot of
// its own (host/dup-N) and a plain archive beside them (host/plain).
func hostileArchiveStore(t *testing.T) (st string, dups map[string]string, plain string) {
	t.Helper()
	st = e2e.OwnStore(t, "cairn-e2e-")
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	dups = map[string]string{}
	outside := t.TempDir()
	for i, tr := range hostile.Tricks(outside) {
		if _, ok := duplicateTricks[tr.Name]; !ok && tr.Name != "plain tree" {
			continue
		}
		meta, payload := hostile.Encode(tr.Root)
		g := store.Group{Type: store.TypeHost, ID: "dup-" + string(rune('a'+i))}
		if tr.Name == "plain tree" {
			g.ID = "plain"
		}
		snap, err := hostile.Store(t.Context(), s, g, at, "root.pxar", meta, payload)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Name == "plain tree" {
			plain = snap.String()
		} else {
			dups[tr.Name] = snap.String()
		}
	}
	if len(dups) != len(duplicateTricks) || plain == "" {
		t.Fatalf("tricks missing: have %v, plain %q", dups, plain)
	}
	return st, dups, plain
}

// TestDuplicateNamesRefusedEverywhere: `cairn ls`, `cairn cat`, `cairn
// restore` and the mount refuse a directory that names an entry twice,
// with an error naming the name, in bounded time; the mount lives on and
// a plain archive in the same store reads.
func TestDuplicateNamesRefusedEverywhere(t *testing.T) {
	t.Parallel() // a store of its own (hostileArchiveStore)
	st, dups, plain := hostileArchiveStore(t)
	for trick, name := range duplicateTricks {
		snap := dups[trick]
		for _, args := range [][]string{
			{"ls", snap, "root.pxar"},
			{"cat", snap, "root.pxar", name},
			{"restore", snap, "root.pxar", filepath.Join(t.TempDir(), "target")},
		} {
			r := e2e.CairnBounded(t, append([]string{"--store", st}, args...)...)
			if r.Code == 0 || !strings.Contains(r.Stderr, "more than once") || !strings.Contains(r.Stderr, `"`+name+`"`) {
				t.Errorf("%s: cairn %s: exit %d, want a duplicate-name error naming %q:\n%s", trick, args[0], r.Code, name, r.Stderr)
			}
		}
	}
	mnt := e2e.MountStore(t, st)
	for trick := range dups {
		var err error
		hostile.InTime(t, "list "+trick, func() { _, err = os.ReadDir(filepath.Join(mnt, dups[trick], "root.pxar")) })
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s: listing through the mount: %v, want EIO", trick, err)
		}
	}
	var got []byte
	var err error
	hostile.InTime(t, "read plain", func() { got, err = os.ReadFile(filepath.Join(mnt, plain, "root.pxar", "a", "f")) })
	if err != nil || string(got) != "new" {
		t.Fatalf("plain archive through the mount after the hostile ones: %q, %v", got, err)
	}
}
