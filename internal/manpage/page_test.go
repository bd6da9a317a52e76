package manpage

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// groffText renders a man page as plain text with groff, failing the
// test on any warning; it skips without groff (CI installs groff-base).
func groffText(t *testing.T, page string) string {
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

// TestManPageEscapes: text roff would read as requests or escapes (a
// line starting with . or ', a backslash, \fB) comes out as written,
// indented lines stay lines, and a long description is whole.
func TestManPageEscapes(t *testing.T) {
	long := "First paragraph,\n.TH not a request\n'also not one\nback\\slash \\fBnot bold \\\" and -dash.\n\n" +
		"  --flag X   kept   as a\n  .line      of its own\n\nLast paragraph."
	c := &cobra.Command{Use: "probe ARG", Short: "a probe: 'quoted' \\ and \u00e9", Long: long, Run: func(*cobra.Command, []string) {}}
	(&cobra.Command{Use: "cairn"}).AddCommand(c)
	c.Flags().String("size", "4M", "a size with a \\ backslash")
	page := Page(c, Manual{Date: time.Unix(0, 0), Source: "cairn test"})
	text := groffText(t, page)
	for _, want := range []string{
		"cairn-probe - a probe: 'quoted' \\ and \u00e9",
		"First paragraph, .TH not a request 'also not one back\\slash \\fBnot bold \\\" and -dash.",
		"\n --flag X kept as a\n .line of its own\n",
		"Last paragraph.",
		"--size string\n a size with a \\ backslash (default 4M)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q:\n%s\n%s", want, text, page)
		}
	}
}
