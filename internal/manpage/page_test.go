package manpage

import (
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/manpage/manpagetest"
	"github.com/spf13/cobra"
)

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
	text := manpagetest.GroffText(t, page)
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
