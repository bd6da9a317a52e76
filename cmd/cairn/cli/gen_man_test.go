package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/manpage/manpagetest"
)

// manSections are the section titles of a rendered page, in order.
func manSections(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l != "" && l == strings.ToUpper(l) && !strings.HasPrefix(l, " ") && !strings.Contains(l, "(1)") {
			out = append(out, l)
		}
	}
	return out
}

// TestManPages renders every page cairn gen man writes: cairn(1) has
// every section with the manual's tables, each command's page its
// examples and the exit codes.
func TestManPages(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "1767225600")
	if code, msg := runArgs(t.Context(), "-q", "gen", "man", dir); code != 0 {
		t.Fatalf("gen man: exit %d: %s", code, msg)
	}
	pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if len(pages) < 40 {
		t.Fatalf("%d pages", len(pages))
	}
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text := manpagetest.GroffText(t, string(data))
		want := []string{"NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "EXAMPLES", "EXIT STATUS", "ENVIRONMENT", "SEE ALSO"}
		if filepath.Base(p) == "cairn.1" {
			want = []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "EXAMPLES", "EXIT STATUS", "ENVIRONMENT", "FILES", "SEE ALSO"}
		}
		if got := manSections(text); !isSubsequence(want, got) {
			t.Errorf("%s: sections %q, want %q in order", filepath.Base(p), got, want)
		}
		for _, e := range exitStatuses {
			if row := " " + e.term + " " + strings.ReplaceAll(e.text, "`", ""); !strings.Contains(strings.Join(strings.Fields(text), " "), row) {
				t.Errorf("%s: no exit status row %q", filepath.Base(p), row)
			}
		}
		if !strings.Contains(text, "2026-01-01") {
			t.Errorf("%s: not dated SOURCE_DATE_EPOCH", filepath.Base(p))
		}
	}
	root, _ := os.ReadFile(filepath.Join(dir, "cairn.1"))
	text := strings.Join(strings.Fields(manpagetest.GroffText(t, string(root))), " ")
	for _, e := range slices.Concat(environment, files) {
		if row := e.term + " " + strings.ReplaceAll(e.text, "`", ""); !strings.Contains(text, row) {
			t.Errorf("cairn.1 lacks %q", row)
		}
	}
}

func isSubsequence(want, got []string) bool {
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	return i == len(want)
}

// TestManPagesBadDir: gen man into a directory it cannot make fails.
func TestManPagesBadDir(t *testing.T) {
	if code, _ := runArgs(t.Context(), "gen", "man", "/proc/no/such"); code != exitError {
		t.Errorf("exit %d", code)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "yesterday")
	if code, _ := runArgs(t.Context(), "gen", "man", t.TempDir()); code != exitUsage {
		t.Errorf("bad SOURCE_DATE_EPOCH: exit %d", code)
	}
}
