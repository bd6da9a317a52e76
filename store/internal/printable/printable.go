// Package printable makes text from elsewhere (a process's command line,
// a bucket's keys, a lease's holder) safe to print: what a terminal would
// interpret is replaced, and the text is bounded.
package printable

import (
	"strings"
	"unicode"
)

// MaxCommand bounds a lock holder's command line in messages.
const MaxCommand = 200

// String replaces what a terminal would interpret and shortens s to
// about n bytes.
func String(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) {
			return r
		}
		return '?'
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
