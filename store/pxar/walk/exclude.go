package walk

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Exclude patterns follow PBS (the pathpatterns crate with PATH_NAME):
// gitignore-like globs matched against "/" + the path relative to the
// walk root. "!" makes a pattern re-include; a trailing "/" restricts it to
// directories; a pattern is tried against every path suffix that starts
// after a "/", so "a/b" matches ".../a/b" anywhere while "/a/b" only
// matches at the root. "*" and "?" stop at "/", "**" as a whole path
// component crosses directories, "[...]" is a byte class ("^" negates,
// "[:alpha:]" and friends inside). The last matching pattern decides.

type compKind uint8

const (
	cLiteral compKind = iota
	cQuestion
	cStar
	cStarStar
	cClass
)

type component struct {
	kind    compKind
	literal string
	class   *byteClass
}

type byteClass struct {
	negated bool
	set     [256]bool
}

// pattern is one parsed exclude or include rule.
type pattern struct {
	text     string // as given, for .pxarexclude-cli / the prelude
	comps    []component
	include  bool
	dirOnly  bool
	anchored bool // matches the whole path only
	starStar bool // has a "**" component
}

// parsePattern parses a pattern line; include patterns start with "!".
func parsePattern(line string) (*pattern, error) {
	p := &pattern{text: line}
	if strings.HasPrefix(line, "!") {
		p.include = true
		line = line[1:]
	}
	if line == "" {
		return nil, fmt.Errorf("empty pattern %q", p.text)
	}
	trimmed := strings.TrimRight(line, "/")
	switch {
	case trimmed == "":
		trimmed, p.dirOnly = "/", true
	case len(trimmed) < len(line):
		p.dirOnly = true
	}
	comps, err := parseGlob(trimmed)
	if err != nil {
		return nil, fmt.Errorf("pattern %q: %w", p.text, err)
	}
	p.comps = comps
	for _, c := range comps {
		p.starStar = p.starStar || c.kind == cStarStar
	}
	return p, nil
}

func parseGlob(s string) ([]component, error) {
	var comps []component
	var lit []byte
	flush := func() {
		if len(lit) > 0 {
			comps = append(comps, component{kind: cLiteral, literal: string(lit)})
			lit = nil
		}
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 0:
			return nil, fmt.Errorf("NUL byte")
		case '\\':
			i++
			if i == len(s) {
				return nil, fmt.Errorf("trailing backslash")
			}
			lit = append(lit, s[i])
		case '?':
			flush()
			comps = append(comps, component{kind: cQuestion})
		case '*':
			flush()
			j := i
			for j+1 < len(s) && s[j+1] == '*' {
				j++
			}
			kind := cStar
			if j > i && (i == 0 || s[i-1] == '/') && (j+1 == len(s) || s[j+1] == '/') {
				kind = cStarStar
			}
			comps = append(comps, component{kind: kind})
			i = j
		case '[':
			flush()
			cl, next, err := parseClass(s, i)
			if err != nil {
				return nil, err
			}
			comps = append(comps, component{kind: cClass, class: cl})
			i = next
		default:
			lit = append(lit, c)
		}
	}
	flush()
	return comps, nil
}

var namedClasses = map[string]func(byte) bool{
	"alnum":  func(b byte) bool { return isAlpha(b) || isDigit(b) },
	"alpha":  isAlpha,
	"blank":  func(b byte) bool { return b == ' ' || b == '\t' },
	"cntrl":  func(b byte) bool { return b < 0x20 || b == 0x7f },
	"digit":  isDigit,
	"graph":  func(b byte) bool { return b > 0x20 && b < 0x7f },
	"lower":  func(b byte) bool { return b >= 'a' && b <= 'z' },
	"print":  func(b byte) bool { return b >= 0x20 && b <= 0x7f },
	"punct":  func(b byte) bool { return b > 0x20 && b < 0x7f && !isAlpha(b) && !isDigit(b) },
	"space":  func(b byte) bool { return b == ' ' || (b >= '\t' && b <= '\r') },
	"upper":  func(b byte) bool { return b >= 'A' && b <= 'Z' },
	"xdigit": func(b byte) bool { return isDigit(b) || (b|0x20 >= 'a' && b|0x20 <= 'f') },
}

func isAlpha(b byte) bool { return (b|0x20) >= 'a' && (b|0x20) <= 'z' }
func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// parseClass parses "[...]" starting at s[at]; it returns the index of
// the closing "]".
func parseClass(s string, at int) (*byteClass, int, error) {
	cl := &byteClass{}
	i := at + 1
	if i < len(s) && s[i] == '^' {
		cl.negated = true
		i++
	}
	prev := -1
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ']':
			return cl, i, nil
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := strings.Index(s[i+2:], ":]")
			f := namedClasses[s[i+2:i+2+max(end, 0)]]
			if end < 0 || f == nil {
				return nil, 0, fmt.Errorf("malformed named class at byte %d", at)
			}
			for b := range 256 {
				if f(byte(b)) {
					cl.set[b] = true
				}
			}
			i += end + 3
			prev = -1
		case c == '-' && prev >= 0 && i+1 < len(s) && s[i+1] != ']':
			i++
			hi := s[i]
			if hi == '\\' && i+1 < len(s) {
				i++
				hi = s[i]
			}
			lo := byte(prev)
			if lo > hi {
				lo, hi = hi, lo
			}
			for b := int(lo); b <= int(hi); b++ {
				cl.set[b] = true
			}
			prev = -1
		default:
			if c == '\\' && i+1 < len(s) {
				i++
				c = s[i]
			}
			cl.set[c] = true
			prev = int(c)
		}
	}
	return nil, 0, fmt.Errorf("unclosed character class at byte %d", at)
}

// starStarMemo remembers, across the matches of one path (all of whose
// texts are suffixes of it), the longest text on which the loop of a "**"
// followed by the components rest failed, keyed by len(rest): rest then
// matches no suffix of it, so no shorter text needs the loop again. It
// keeps a deep path from costing its length once per suffix.
type starStarMemo map[int]int

// matchGlob reports whether comps match all of text.
func matchGlob(comps []component, text string) bool { return matchGlobMemo(comps, text, nil) }

func matchGlobMemo(comps []component, text string, memo starStarMemo) bool {
	for ci, c := range comps {
		switch c.kind {
		case cLiteral:
			if !strings.HasPrefix(text, c.literal) {
				return false
			}
			text = text[len(c.literal):]
		case cQuestion:
			if text == "" || text[0] == '/' {
				return false
			}
			text = text[1:]
		case cClass:
			if text == "" || c.class.set[text[0]] == c.class.negated {
				return false
			}
			text = text[1:]
		case cStar:
			rest := comps[ci+1:]
			for k := 0; ; k++ {
				if matchGlobMemo(rest, text[k:], memo) {
					return true
				}
				if k == len(text) || text[k] == '/' {
					return false
				}
			}
		case cStarStar:
			rest := comps[ci+1:]
			// "a/**/b" also matches "a/b": drop the "/" the "**" would
			// otherwise need on its right.
			if ci > 0 && strings.HasSuffix(comps[ci-1].literal, "/") && len(rest) > 0 &&
				rest[0].kind == cLiteral && strings.HasPrefix(rest[0].literal, "/") {
				skip := append([]component{{kind: cLiteral, literal: rest[0].literal[1:]}}, rest[1:]...)
				if matchGlobMemo(skip, text, memo) {
					return true
				}
			}
			if n, ok := memo[len(rest)]; ok && len(text) <= n {
				return false
			}
			// Try only where the next literal occurs: a deep path (a
			// hostile archive's, on restore) makes every offset costly.
			for k := 0; k <= len(text); k++ {
				if len(rest) > 0 && rest[0].kind == cLiteral {
					j := strings.Index(text[k:], rest[0].literal)
					if j < 0 {
						return false
					}
					k += j
				}
				if matchGlobMemo(rest, text[k:], memo) {
					return true
				}
			}
			if memo != nil {
				memo[len(rest)] = max(memo[len(rest)], len(text))
			}
			return false
		}
	}
	return text == ""
}

// matches reports whether p applies to path ("/" + relative path).
func (p *pattern) matches(path string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if p.anchored || (len(p.comps) > 0 && p.comps[0].kind == cStarStar) {
		// a leading "**" takes any prefix: the suffixes add nothing
		return matchGlob(p.comps, path)
	}
	var memo starStarMemo
	if p.starStar {
		memo = starStarMemo{}
	}
	if matchGlobMemo(p.comps, path, memo) {
		return true
	}
	// longest first, so that the memo's first entries cover the rest
	for i := 0; i < len(path); i++ {
		if path[i] == '/' && matchGlobMemo(p.comps, path[i+1:], memo) {
			return true
		}
	}
	return false
}

// patternList is the stack of active patterns, CLI patterns first.
type patternList []*pattern

// excluded reports whether the last matching pattern excludes path.
func (l patternList) excluded(path string, isDir bool) bool {
	for i := len(l) - 1; i >= 0; i-- {
		if l[i].matches(path, isDir) {
			return !l[i].include
		}
	}
	return false
}

// readExcludeFile parses a .pxarexclude file of the directory at dirPath
// ("/" + relative path, "" for the root). Lines starting with "/" are
// anchored to that directory. Bad lines are returned as errors beside the
// patterns that parsed.
func readExcludeFile(r io.Reader, dirPath string) ([]*pattern, []error) {
	var pats []*pattern
	var errs []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := string(bytes.Trim(sc.Bytes(), " \t\n\v\f\r"))
		if line == "" || line[0] == '#' {
			continue
		}
		include, anchored := false, false
		if strings.HasPrefix(line, "!") {
			include, line = true, line[1:]
		}
		if strings.HasPrefix(line, "/") {
			anchored, line = true, dirPath+line
		}
		if include {
			line = "!" + line
		}
		p, err := parsePattern(line)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		p.anchored = anchored
		pats = append(pats, p)
	}
	if err := sc.Err(); err != nil {
		return nil, append(errs, err)
	}
	return pats, errs
}

// cliContent is the .pxarexclude-cli text PBS stores for the command
// line patterns: one per line, "!" for includes, "/" after directory-only
// patterns.
func cliContent(pats []*pattern) []byte {
	var b bytes.Buffer
	for _, p := range pats {
		if p.include {
			b.WriteByte('!')
		}
		t := strings.TrimPrefix(p.text, "!")
		t = strings.TrimRight(t, "/")
		if t == "" {
			t = "/"
		}
		b.WriteString(t)
		if p.dirOnly && !strings.HasSuffix(t, "/") {
			b.WriteByte('/')
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}
