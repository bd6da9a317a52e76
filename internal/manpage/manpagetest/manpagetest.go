// Package manpagetest renders man pages for the tests of the packages
// that write them (internal/manpage, cmd/cairn).
package manpagetest

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// GroffText renders a man page as plain text with groff, failing the
// test on any warning; it skips without groff (CI installs groff-base).
func GroffText(t *testing.T, page string) string {
	t.Helper()
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skip("no groff (apt-get install groff-base)")
	}
	cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-P-cbou", "-rLL=100n")
	cmd.Stdin = strings.NewReader(page)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil || errb.Len() > 0 {
		t.Fatalf("groff: %v: %s", err, errb.String())
	}
	// one space for any run of white space, ASCII for groff's minus and hyphen
	text := strings.NewReplacer("\u2212", "-", "\u2010", "-", "\u2019", "'", "\u2018", "'").Replace(out.String())
	return regexp.MustCompile(`[ \t]+`).ReplaceAllString(text, " ")
}
