// Package termsafe makes strings that come from stored data (manifests,
// archives, tapes, key files, errors that quote them) safe to print for
// a person: nothing in them reaches a terminal as a control sequence,
// and one string stays on one line. JSON output needs none of it: the
// encoder escapes control characters itself.
package termsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Quote returns s as it is if it is printable UTF-8 without backslashes
// or quotes, else Go-quoted, so that one name stays on one line whatever
// bytes it holds and a quoted name cannot be mistaken for a plain one.
// For names and fields shown in columns and lists.
func Quote(s string) string {
	if plain(s) && !strings.ContainsAny(s, `\"`) {
		return s
	}
	return strconv.Quote(s)
}

// Escape returns s with every rune that is not printable (control
// characters such as ESC, BEL, CR and newline, format characters) and
// every byte of invalid UTF-8 written as a Go escape (\x1b, \a, \r,
// \n, \u200b), the rest as it is. For free text such as an error
// message or a log line, where quoting the whole would hide what it
// says.
func Escape(s string) string {
	if plain(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&15, 16))
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// plain reports whether s is valid UTF-8 of printable runes only.
func plain(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
