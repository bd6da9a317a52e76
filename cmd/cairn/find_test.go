package main

import (
	"bytes"
	"strings"
	"testing"

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
		got, err := completePath(t.Context(), acc, in, 10)
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("complete %q: %q, %v; want %q", in, got, err, want)
		}
	}
	if got, _ := completePath(t.Context(), acc, "", 2); len(got) != 2 {
		t.Errorf("limit 2: %q", got)
	}
	if _, err := completePath(t.Context(), acc, "abc/", 10); err == nil {
		t.Error("completion below a file: no error")
	}
}

// TestFindSize: find's --size values.
func TestFindSize(t *testing.T) {
	t.Parallel()
	if c, n, err := parseSizeTest("+1k"); c != 1 || n != 1024 || err != nil {
		t.Errorf("+1k: %d %d %v", c, n, err)
	}
	if c, n, err := parseSizeTest("-3"); c != -1 || n != 3 || err != nil {
		t.Errorf("-3: %d %d %v", c, n, err)
	}
	for _, bad := range []string{"", "+", "--1", "1q"} {
		if _, _, err := parseSizeTest(bad); err == nil {
			t.Errorf("--size %q accepted", bad)
		}
	}
}
