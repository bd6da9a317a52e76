package manpage

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// roff builds a man(7) page. Every text it is given is escaped, so
// nothing of it is read as a request or an escape: a backslash is \e, a
// hyphen \- (an option's minus sign, as man pages write it), a line that
// would start with . or ' starts with \& instead, and a character beyond
// ASCII is \[uXXXX], which groff renders whatever its input encoding.
type roff struct{ b strings.Builder }

// req writes a request (.SH, .TP, …) with its arguments, quoted where
// they hold a space.
func (r *roff) req(name string, args ...string) {
	r.b.WriteString("." + name)
	for _, a := range args {
		a = strings.ReplaceAll(roffEscape(a), `"`, `\(dq`)
		if a == "" || strings.ContainsAny(a, " \t") {
			a = `"` + a + `"`
		}
		r.b.WriteString(" " + a)
	}
	r.b.WriteString("\n")
}

// line writes s, already in roff, as one text line.
func (r *roff) line(s string) {
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	r.b.WriteString(s + "\n")
}

// section starts a section (.SH).
func (r *roff) section(title string) { r.req("SH", title) }

// para writes a filled paragraph of plain text.
func (r *roff) para(text string) {
	r.req("PP")
	r.filled(text)
}

// filled writes text's lines as filled text, `code` in bold.
func (r *roff) filled(text string) {
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			r.line(roffInline(l))
		}
	}
}

// tagged writes an indented paragraph under a tag (.TP), both with
// `code` in bold; a tag of plain words is bold throughout.
func (r *roff) tagged(tag, text string) {
	r.req("TP")
	if !strings.Contains(tag, "`") {
		tag = "`" + tag + "`"
	}
	r.line(roffInline(tag))
	r.filled(text)
}

// pre writes lines as they are, indented, without filling.
func (r *roff) pre(lines []string) {
	r.req("RS", "4")
	r.req("nf")
	for _, l := range lines {
		r.line(roffEscape(l))
	}
	r.req("fi")
	r.req("RE")
}

// text writes a command's description: paragraphs apart at blank lines,
// and the indented lines within them (tables of flags, trees of paths)
// kept as they are.
func (r *roff) text(s string) {
	for _, p := range strings.Split(strings.TrimSpace(s), "\n\n") {
		var fill []string
		var kept []string
		flush := func() {
			if len(fill) > 0 {
				r.para(strings.Join(fill, "\n"))
				fill = nil
			}
			if len(kept) > 0 {
				r.req("sp")
				r.pre(kept)
				kept = nil
			}
		}
		for _, l := range strings.Split(p, "\n") {
			indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t")
			if indented != (len(kept) > 0) && (len(fill) > 0 || len(kept) > 0) {
				flush()
			}
			if indented {
				kept = append(kept, l)
			} else {
				fill = append(fill, l)
			}
		}
		flush()
	}
}

// roffEscape escapes plain text for a text line or a request's argument.
func roffEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '\\':
			b.WriteString(`\e`)
		case c == '-':
			b.WriteString(`\-`)
		case c == utf8.RuneError:
			b.WriteString(`\[uFFFD]`)
		case c >= 0x80:
			fmt.Fprintf(&b, `\[u%04X]`, c)
		case c < 0x20 || c == 0x7f:
			b.WriteByte(' ') // no control character reaches troff
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

// roffInline escapes s with its `code spans` in bold.
func roffInline(s string) string {
	parts := strings.Split(s, "`")
	for i, p := range parts {
		parts[i] = roffEscape(p)
		if i%2 == 1 {
			parts[i] = `\fB` + parts[i] + `\fR`
		}
	}
	return strings.Join(parts, "")
}

// String is the page.
func (r *roff) String() string { return r.b.String() }
