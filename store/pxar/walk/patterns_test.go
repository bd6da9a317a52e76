package walk

import (
	"strings"
	"testing"
)

// TestPatterns: the exported matcher answers as the walker's excludes do
// (anywhere, anchored, directory-only, "!", last match decides).
func TestPatterns(t *testing.T) {
	p, err := ParsePatterns([]string{"*.log", "!keep.log", "/etc/ssh", "cache/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		dir  bool
		want bool
	}{
		{"a.log", false, true},
		{"var/log/b.log", false, true},
		{"docs/keep.log", false, false},
		{"etc/ssh", true, true},
		{"x/etc/ssh", true, false},
		{"home/u/cache", true, true},
		{"home/u/cache", false, false},
		{"etc", true, false},
	} {
		if got := p.Match(c.path, c.dir); got != c.want {
			t.Errorf("Match(%q, dir %v) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
	if _, err := ParsePatterns([]string{"ok", "[x"}); err == nil {
		t.Error("a malformed pattern parsed")
	}
	if p.Len() != 4 {
		t.Errorf("Len %d", p.Len())
	}
}

// TestPatternsDeepPath matches patterns against a path as deep and long
// as a hostile archive may hold (4096 names of 255 bytes): "**" tries
// only the places its next literal occurs, and a leading "**" is matched
// once rather than against every suffix, so each answer costs about the
// path's length rather than its square.
func TestPatternsDeepPath(t *testing.T) {
	name := strings.Repeat("n", 255)
	deep := strings.Repeat(name+"/", 4095) + "x.log"
	p, err := ParsePatterns([]string{"**/y", "a/**/b/**/c", "*.log", "!" + name + "/**/z"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if !p.Match(deep, false) {
			t.Fatal("*.log did not match the deep path")
		}
		if p.Match(deep+"y", true) {
			t.Fatal("a pattern matched what it should not")
		}
	}
}
