package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// ErrInvalid is what every error of Parse and Load about the file's
// contents wraps.
var ErrInvalid = errors.New("invalid configuration")

// Error is one thing wrong in a configuration file: where, which field
// and what.
type Error struct {
	Path  string
	Line  int    // 0: the whole file
	Field string // `job "nightly": schedule`, `http.listen`; empty for the file's syntax
	Msg   string
	Err   error // the cause (calendar.ErrSyntax, store.ErrBadName, …), or nil
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalid) true, and the cause's too.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// maxErrors bounds how many errors one Parse reports.
const maxErrors = 10

// quote writes a string from the file for a message: quoted, with what
// a terminal would interpret escaped, at most 100 bytes of it.
func quote(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return strconv.Quote(s)
}

// clean makes a message from elsewhere (the TOML decoder's, which may
// hold bytes of the file) safe to print and bounded.
func clean(s string) string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r == unicode.ReplacementChar || !unicode.IsPrint(r) {
			return '?'
		}
		return r
	}, s)
}

// keyName writes a TOML key path as dotted words, quoting parts that
// are not plain.
func keyName(parts []string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = p
		if p == "" || strings.ContainsFunc(p, func(r rune) bool {
			return !(r == '_' || r == '-' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)))
		}) {
			out[i] = quote(p)
		}
	}
	return strings.Join(out, ".")
}
