package browse

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
)

// Test is find's conjunction of tests on one entry.
type Test struct {
	Name, Path *regexp.Regexp
	Types      map[string]bool // f, d, l, b, c, p, s
	Newer      *time.Time
	SizeCmp    int // -1: smaller than size, 0: exactly, 1: larger
	Size       *uint64
}

// Match reports whether e, at path, passes every test.
func (t *Test) Match(e *pxar.Entry, path string) bool {
	if t.Name != nil && !t.Name.MatchString(e.Name) {
		return false
	}
	if t.Path != nil && !t.Path.MatchString(path) {
		return false
	}
	if t.Types != nil && !t.Types[typeLetter(e)] {
		return false
	}
	if t.Newer != nil && !mtimeOf(e).After(*t.Newer) {
		return false
	}
	if t.Size != nil {
		s := entrySize(e)
		switch t.SizeCmp {
		case -1:
			return s < *t.Size
		case 1:
			return s > *t.Size
		}
		return s == *t.Size
	}
	return true
}

// typeLetter is find's -type letter of an entry.
func typeLetter(e *pxar.Entry) string {
	switch entryType(e) {
	case "file":
		return "f"
	case "directory":
		return "d"
	case "symlink":
		return "l"
	case "block_device":
		return "b"
	case "char_device":
		return "c"
	case "fifo":
		return "p"
	case "socket":
		return "s"
	}
	return "?"
}

// ParseTypes parses --type: letters of f d l b c p s, comma-separated.
func ParseTypes(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, l := range strings.Split(s, ",") {
		if len(l) != 1 || !strings.Contains("fdlbcps", l) {
			return nil, fmt.Errorf("%q: want one or more of f, d, l, b, c, p, s separated by commas", s)
		}
		out[l] = true
	}
	return out, nil
}

// ParseNewer parses --newer: a time (RFC 3339, or YYYY-MM-DD and
// YYYY-MM-DD HH:MM[:SS] in UTC) or an age before now (7d, 36h, 90m,
// 1h30m).
func ParseNewer(s string, now time.Time) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02", "2006-01-02 15:04", "2006-01-02 15:04:05",
		"2006-01-02T15:04", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(d, 10, 16)
		if err == nil {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q: want a time (2024-05-01, \"2024-05-01 12:00\", RFC 3339) or an age (7d, 36h, 90m)", s)
}

// Glob compiles a shell glob as find's -name and -path take it
// (fnmatch without FNM_PATHNAME: '*' and '?' match '/' too; [a-z],
// [!a-z], backslash escapes) into an anchored regular expression, which
// matches in time linear in the name.
func Glob(pat string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '\\':
			if i+1 == len(pat) {
				return nil, errors.New("pattern ends in a backslash")
			}
			i++
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		case '[':
			end, err := globClass(&b, pat, i)
			if err != nil {
				return nil, err
			}
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("bad pattern: %w", err)
	}
	return re, nil
}

// globClass writes the bracket expression starting at pat[at] ('[') and
// returns the index of its closing ']'.
func globClass(b *strings.Builder, pat string, at int) (int, error) {
	j := at + 1
	b.WriteByte('[')
	if j < len(pat) && (pat[j] == '!' || pat[j] == '^') {
		b.WriteByte('^')
		j++
	}
	first := true
	for ; j < len(pat); j++ {
		c := pat[j]
		if c == ']' && !first {
			b.WriteByte(']')
			return j, nil
		}
		first = false
		if c == '\\' || c == '[' || c == ']' || c == '^' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return 0, errors.New("unterminated [ in pattern")
}
