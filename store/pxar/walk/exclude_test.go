package walk

import (
	"strings"
	"testing"
)

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern, path string
		dir, match    bool
	}{
		{"*.tmp", "/a/b.tmp", false, true},
		{"*.tmp", "/b.tmp", false, true},
		{"*.tmp", "/a.tmp/x", false, false},
		{"/top", "/top", false, true},
		{"/top", "/a/top", false, false},
		{"a/b", "/x/a/b", false, true},
		{"a/b", "/x/a/bc", false, false},
		{"logs/", "/x/logs", true, true},
		{"logs/", "/x/logs", false, false},
		{"logs//", "/logs", true, true},
		{"**/foo", "/a/b/foo", false, true},
		{"a/**/b", "/a/b", false, true},
		{"a/**/b", "/a/x/y/b", false, true},
		{"a/**", "/a/x/y", false, true},
		{"/a/**", "/a", true, false},
		{"a**b", "/axb", false, true},
		{"a**b", "/a/b", false, false},
		{"[a-c]x", "/bx", false, true},
		{"[a-c]x", "/dx", false, false},
		{"[^a-c]x", "/dx", false, true},
		{"[c-a]x", "/bx", false, true},
		{"f?o", "/foo", false, true},
		{"f?o", "/f/o", false, false},
		{"[[:digit:]]*", "/9abc", false, true},
		{"[[:upper:]]", "/a", false, false},
		{`\*lit`, "/*lit", false, true},
		{`\*lit`, "/xlit", false, false},
		{"*", "/anything/at/all", false, true},
		{"x*y*z", "/xaaybbz", false, true},
		{"x*y*z", "/xaay/bz", false, false},
	}
	for _, c := range cases {
		p, err := parsePattern(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		if got := p.matches(c.path, c.dir); got != c.match {
			t.Errorf("%q matches %q (dir %v) = %v, want %v", c.pattern, c.path, c.dir, got, c.match)
		}
	}
	for _, bad := range []string{"", "!", "[abc", `abc\`, "[[:nope:]]", "a\x00b"} {
		if _, err := parsePattern(bad); err == nil {
			t.Errorf("pattern %q accepted", bad)
		}
	}
}

func TestPatternListOrder(t *testing.T) {
	mk := func(ps ...string) patternList {
		var l patternList
		for _, s := range ps {
			p, err := parsePattern(s)
			if err != nil {
				t.Fatal(err)
			}
			l = append(l, p)
		}
		return l
	}
	if mk("*.tmp", "!keep.tmp").excluded("/d/keep.tmp", false) {
		t.Error("later include does not win")
	}
	if !mk("!keep.tmp", "*.tmp").excluded("/d/keep.tmp", false) {
		t.Error("later exclude does not win")
	}
	if mk("*.tmp").excluded("/d/x.txt", false) {
		t.Error("non-matching path excluded")
	}
}

func TestExcludeFile(t *testing.T) {
	pats, errs := readExcludeFile(strings.NewReader("# c\n\n /abs \n!/inc\n!rel\nplain/\n[bad\n"), "/d/e")
	if len(errs) != 1 || len(pats) != 4 {
		t.Fatalf("patterns %d, errors %v", len(pats), errs)
	}
	l := patternList(pats)
	for path, want := range map[string]bool{"/d/e/abs": true, "/d/e/x/abs": false, "/abs": false} {
		if got := l.excluded(path, false); got != want {
			t.Errorf("%s excluded = %v, want %v", path, got, want)
		}
	}
	if !pats[1].include || !pats[1].anchored || !pats[1].matches("/d/e/inc", false) {
		t.Errorf("!/inc parsed as %+v", pats[1])
	}
	if !pats[3].dirOnly {
		t.Error("plain/ not directory-only")
	}
	if got := string(cliContent(pats)); got != "/d/e/abs\n!/d/e/inc\n!rel\nplain/\n" {
		t.Errorf("cli content %q", got)
	}
}
