package termsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// hostile are strings of each class a terminal would act on or that
// would break a line: C0 and C1 controls, DEL, format characters,
// invalid UTF-8, and what needs quoting to stay unambiguous.
var hostile = []string{
	"ok\x1b[31mred", "title\x1b]0;x\a", "bell\a", "cr\rover", "two\nlines", "tab\tcol", "nul\x00", "del\x7f",
	"c1\u009b31m", "bidi\u202eevil", "zw\u200bsp", "bad\xff\xfeutf8", "cut\xe2\x82", `back\slash`, `quo"te`,
}

func TestQuoteAndEscape(t *testing.T) {
	for _, s := range []string{"", "plain", "vm/100/2024-05-01T10:00:00Z", "üñï código", "a b-c_d.e"} {
		if Quote(s) != s || Escape(s) != s {
			t.Errorf("%q changed: Quote %q, Escape %q", s, Quote(s), Escape(s))
		}
	}
	for _, s := range hostile {
		for name, got := range map[string]string{"Quote": Quote(s), "Escape": Escape(s)} {
			if !utf8.ValidString(got) || strings.IndexFunc(got, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
				t.Errorf("%s(%q) = %q: not printable", name, s, got)
			}
		}
		if q := Quote(s); q[0] != '"' {
			t.Errorf("Quote(%q) = %q: not quoted", s, q)
		}
	}
	if got := Escape("a\x1b[31mb\xffc\n"); got != `a\x1b[31mb\xffc\n` {
		t.Errorf("Escape: %s", got)
	}
	if got := Escape(`keeps "quotes" and \ backslashes`); got != `keeps "quotes" and \ backslashes` {
		t.Errorf("Escape: %s", got)
	}
}
