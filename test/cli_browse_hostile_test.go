package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/test/e2e"
)

// browseMetadataOnly: ls and find read a split archive's metadata
// only. With the payload index gone from the snapshot, they still list
// every entry, while cat, which needs the payload, fails.
func browseMetadataOnly(t *testing.T, st string) {
	src := browseTree(t)
	e2e.MustCairn(t, "--store", st, "backup", "--type", "host", "--id", "meta-only", "-q", "root.pxar:"+src)
	want := e2e.MustCairn(t, "--store", st, "find", "host/meta-only", "root.pxar").Stdout
	payload, err := filepath.Glob(filepath.Join(st, "host", "meta-only", "*", "root.ppxar.didx"))
	if err != nil || len(payload) != 1 {
		t.Fatalf("payload index: %v %v", payload, err)
	}
	if err := os.Remove(payload[0]); err != nil {
		t.Fatal(err)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "cat", "host/meta-only", "root.pxar", "a.txt"); r.Code == 0 || !strings.Contains(r.Stderr, "ppxar") {
		t.Fatalf("cat without the payload index: exit %d, %q", r.Code, r.Stderr)
	}
	if got := e2e.MustCairn(t, "--store", st, "find", "host/meta-only", "root.pxar").Stdout; got != want || strings.Count(got, "\n") != 10 {
		t.Errorf("find without the payload index:\n%s\nwant:\n%s", got, want)
	}
	if got := e2e.MustCairn(t, "--store", st, "ls", "-R", "host/meta-only", "root.pxar").Stdout; !strings.Contains(got, " 65536 ") {
		t.Errorf("ls -R without the payload index:\n%s", got)
	}
}

// browseHostileStore is a store of its own holding crafted archives: a
// chain of directories deeper than the walk goes, directories whose
// tables share subdirectories (a plain walk would take 2^38 steps) and
// names with control characters.
func browseHostileStore(t *testing.T) (st, deep, shared string) {
	t.Helper()
	st = e2e.OwnStore(t, "cairn-e2e-")
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 40
	dirs := make([]*hostile.Node, n)
	for i := n - 1; i >= 0; i-- {
		dirs[i] = hostile.Dir(fmt.Sprintf("d%02d", i), hostile.File("f", "x"))
		if i+1 < n {
			dirs[i].Kids = append(dirs[i].Kids, dirs[i+1])
			for j := i + 2; j < n; j++ {
				dirs[i].Kids = append(dirs[i].Kids, hostile.Shared(dirs[j]))
			}
		}
	}
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for id, root := range map[string]*hostile.Node{
		"deep":   hostile.Deep(4100, 1),
		"shared": hostile.Dir("", dirs[0], hostile.File("ctl\x07\r\x1b]0;title\x07", "x")),
	} {
		meta, payload := hostile.Encode(root)
		snap, err := hostile.Store(t.Context(), s, store.Group{Type: store.TypeHost, ID: id}, at, "root.pxar", meta, payload)
		if err != nil {
			t.Fatal(err)
		}
		if id == "deep" {
			deep = snap.String()
		} else {
			shared = snap.String()
		}
	}
	return st, deep, shared
}

// TestCLIBrowseHostile: in a store of their own, ls -R and find on
// crafted archives end in bounded time with exit 3 and an error naming
// the problem, after listing what they could, and control characters
// never reach stdout raw; and ls and find read metadata only.
//
// The chain deeper than the walk goes is listed by find with a name no
// entry has: ls and find share the walk (browse.Walk, whose depth bound
// store/pxar/browse tests), and each of them, text and JSON, reports a
// failed listing as the shared tables show. Listed whole, the chain is a
// path per level holding every level above it, 4096²/2 path elements,
// which took 28 of the test's 37 CPU-s under -race.
func TestCLIBrowseHostile(t *testing.T) {
	t.Parallel()
	st, deep, shared := browseHostileStore(t)
	t.Run("metadata only", func(t *testing.T) { browseMetadataOnly(t, st) })
	all := func(snap string) [][]string {
		return [][]string{{"ls", "-R", snap, "root.pxar"}, {"find", snap, "root.pxar"},
			{"find", snap, "root.pxar", "--json"}, {"ls", "-R", "-l", snap, "root.pxar", "--json"}}
	}
	for _, c := range []struct {
		want string
		runs [][]string
	}{
		{"nested deeper than 4096 levels", [][]string{{"find", deep, "root.pxar", "--name", "none"},
			{"find", deep, "root.pxar", "--name", "none", "--json"}}},
		// a table listing a directory stored inside another fails the
		// listing of its directory (its entries are not those of its table)
		{"its goodbye table lists", all(shared)},
	} {
		for _, args := range c.runs {
			r := e2e.CairnBounded(t, append([]string{"--store", st}, args...)...)
			if r.Code != 3 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "panic") {
				t.Errorf("%v: exit %d, stderr %.500q; want exit 3 and %q", args, r.Code, r.Stderr, c.want)
			}
			if strings.ContainsAny(r.Stdout, "\x07\x1b\r") {
				t.Errorf("%v: raw control characters in the output", args)
			}
			if slices.Contains(args, "--json") {
				if l := decodeListing(t, r.Stdout); len(l.Errors) == 0 || !strings.Contains(l.Errors[0].Error, c.want) {
					t.Errorf("%v: errors %+v", args, l.Errors)
				}
			}
		}
	}
	r := e2e.CairnBounded(t, "--store", st, "find", shared, "root.pxar", "--name", "ctl*")
	if r.Code != 3 || strings.TrimSpace(r.Stdout) != `"/ctl\a\r\x1b]0;title\a"` {
		t.Errorf("find ctl*: exit %d, %q", r.Code, r.Stdout)
	}
}
