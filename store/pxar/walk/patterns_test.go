package walk

import "testing"

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
