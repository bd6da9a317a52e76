package browse

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
)

func hostileAccessor(t *testing.T, root *hostile.Node) *pxar.Accessor {
	t.Helper()
	meta, payload := hostile.Encode(root)
	acc, err := pxar.NewAccessor(t.Context(), bytes.NewReader(meta), int64(len(meta)), bytes.NewReader(payload), int64(len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	return acc
}

type walkLog struct {
	paths []string
	fails []error
}

func walkAll(ctx context.Context, acc *pxar.Accessor, start string) (*walkLog, error) {
	l := &walkLog{}
	w := &Walk{Acc: acc,
		Visit: func(p string, e *pxar.Entry, _ int) (bool, error) { l.paths = append(l.paths, p); return true, nil },
		Fail:  func(p string, err error) { l.fails = append(l.fails, fmt.Errorf("%s: %w", p, err)) }}
	return l, w.Run(ctx, acc.Root(), start)
}

func TestArchiveWalkOrder(t *testing.T) {
	t.Parallel()
	acc := hostileAccessor(t, hostile.Dir("", hostile.File("a", "1"),
		hostile.Dir("d", hostile.File("x", "2"), hostile.Dir("e", hostile.Symlink("l", "/etc"))), hostile.File("z", "")))
	l, err := walkAll(t.Context(), acc, "/")
	if err != nil || len(l.fails) != 0 {
		t.Fatal(err, l.fails)
	}
	want := "/ /a /d /d/x /d/e /d/e/l /z"
	if got := strings.Join(l.paths, " "); got != want {
		t.Fatalf("walk %q, want %q", got, want)
	}
}

// TestArchiveWalkSharedDirs: directories whose tables list, besides their
// own subdirectory, every directory below it would make a plain walk visit
// 2^38 paths; the walk refuses each shared directory instead: the
// listing of each directory whose table lists more than its content
// holds fails at its end (or the walk's own check, ErrSharedDir, would).
func TestArchiveWalkSharedDirs(t *testing.T) {
	t.Parallel()
	const n = 40
	acc := hostileAccessor(t, hostile.SharedDirs(n))
	var l *walkLog
	var err error
	hostile.InTime(t, "walk shared directories", func() { l, err = walkAll(t.Context(), acc, "") })
	if err != nil {
		t.Fatal(err)
	}
	refused := len(l.fails) > 0 && (errors.Is(l.fails[0], pxar.ErrSharedDir) ||
		errors.Is(l.fails[0], pxar.ErrCorrupt) && strings.Contains(l.fails[0].Error(), "its goodbye table lists"))
	if len(l.paths) > 2*n || !refused {
		t.Fatalf("%d paths, fails %v", len(l.paths), l.fails)
	}
}

func TestArchiveWalkDepth(t *testing.T) {
	t.Parallel()
	acc := hostileAccessor(t, hostile.Deep(MaxDepth+10, 1))
	l, err := walkAll(t.Context(), acc, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(l.fails) != 1 || !strings.Contains(l.fails[0].Error(), "nested deeper than 4096") {
		t.Fatalf("fails %v", l.fails)
	}
	if len(l.paths) != MaxDepth+1 {
		t.Fatalf("%d entries visited, want %d", len(l.paths), MaxDepth+1)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := walkAll(ctx, acc, ""); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk: %v", err)
	}
}

func TestGlobRegexp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pat, name string
		want      bool
	}{
		{"*.txt", "a.txt", true}, {"*.txt", "a.txt.gz", false}, {"?", "ab", false}, {"a?c", "abc", true},
		{"[a-c]x", "bx", true}, {"[!a-c]x", "bx", false}, {"[]]", "]", true}, {`\*`, "*", true}, {`\*`, "a", false},
		{"*/e/*", "/d/e/l", true}, {"a.b", "axb", false}, {"(x)", "(x)", true}, {"*", "line\nbreak", true},
		{"[^x]", "y", true}, {"é*", "ete", false}, {"é*", "été", true}, {"[é]", "é", true},
	} {
		re, err := Glob(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := re.MatchString(c.name); got != c.want {
			t.Errorf("%q on %q: %v, want %v", c.pat, c.name, got, c.want)
		}
	}
	for _, bad := range []string{"[", "a[b", `x\`, "[z-a]"} {
		if _, err := Glob(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFindValues(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2024-05-01":           time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC),
		"2024-05-01 13:30":     time.Date(2024, 5, 1, 13, 30, 0, 0, time.UTC),
		"2024-05-01T13:30:00Z": time.Date(2024, 5, 1, 13, 30, 0, 0, time.UTC),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"36h":                  now.Add(-36 * time.Hour),
	} {
		if got, err := ParseNewer(in, now); err != nil || !got.Equal(want) {
			t.Errorf("--newer %q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-5h", "7x", "2024-13-01", "99999999d"} {
		if _, err := ParseNewer(bad, now); err == nil {
			t.Errorf("--newer %q accepted", bad)
		}
	}
	if ty, err := ParseTypes("f,l"); err != nil || !ty["f"] || !ty["l"] || ty["d"] {
		t.Errorf("f,l: %v %v", ty, err)
	}
	for _, bad := range []string{"", "x", "f,", "fd"} {
		if _, err := ParseTypes(bad); err == nil {
			t.Errorf("--type %q accepted", bad)
		}
	}
}

// TestJSONListingStream: the streamed document is one valid listingJSON
// holding exactly its keys.
func TestJSONListingStream(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	l, err := StartJSONListing(&b, "host/x/2024-05-01T00:00:00Z", "root.pxar", "a\x1bb")
	if err != nil {
		t.Fatal(err)
	}
	acc := hostileAccessor(t, hostile.Dir("", hostile.File("f\nx", "1"), hostile.Symlink("s", "f")))
	ow := NewOwners()
	r, err := acc.ReadDirSorted(t.Context(), acc.Root())
	if err != nil {
		t.Fatal(err)
	}
	for range r.Len() {
		e, err := r.Next(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Entry(ow.EntryJSON(e, e.Name)); err != nil {
			t.Fatal(err)
		}
	}
	l.Fail("d", errors.New("bad"))
	if err := l.Finish(); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	var got Listing
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("%v:\n%s", err, b.String())
	}
	if got.Path != "a\x1bb" || len(got.Entries) != 2 || got.Entries[0].Path != "f\nx" || got.Entries[1].Target != "f" ||
		got.Entries[1].Type != "symlink" || len(got.Errors) != 1 || got.Errors[0].Path != "d" {
		t.Fatalf("%+v", got)
	}
}

func TestShortPath(t *testing.T) {
	t.Parallel()
	if p := "/a/b"; ShortPath(p) != p {
		t.Errorf("short path changed: %q", ShortPath(p))
	}
	long := strings.Repeat("/é", 2000)
	s := ShortPath(long)
	if len(s) > 800 || !strings.Contains(s, "…") || !utf8.ValidString(s) || !strings.HasPrefix(s, "/é") || !strings.HasSuffix(s, "/é") {
		t.Errorf("shortPath: %d bytes, %q", len(s), s)
	}
}

func TestCompletePath(t *testing.T) {
	t.Parallel()
	acc := hostileAccessor(t, hostile.Dir("", hostile.File("abc", "1"), hostile.Dir("abd", hostile.File("x1", ""), hostile.File("y", "")),
		hostile.File("b\x1b", ""), hostile.File("zz", "")))
	for in, want := range map[string]string{
		"":       "abc abd/ zz",
		"ab":     "abc abd/",
		"abd/":   "abd/x1 abd/y",
		"/abd/x": "/abd/x1",
		"q":      "",
	} {
		got, err := Complete(t.Context(), acc, in, 10)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("complete %q: %q, %v; want %q", in, got, err, want)
		}
	}
	if got, _ := Complete(t.Context(), acc, "", 2); len(got) != 2 {
		t.Errorf("limit 2: %q", got)
	}
	if _, err := Complete(t.Context(), acc, "abc/", 10); err == nil {
		t.Error("completion below a file: no error")
	}
}
