package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var updateReadme = flag.Bool("update-readme", false, "rewrite README.md's generated sections from manual.go")

const readmePath = "../../../README.md"

// readmeSections are the README's sections made from manual.go, by the
// name their markers carry.
var readmeSections = []struct {
	name        string
	head        [2]string
	rows        []manEntry
	codeTerms   bool
	wantAtLeast int
}{
	{"exit-status", [2]string{"code", "meaning"}, exitStatuses, false, 6},
	{"environment", [2]string{"variable", "what cairn does with it"}, environment, true, 10},
	{"files", [2]string{"path", "what it is"}, files, true, 10},
}

// readmeTable renders rows as a Markdown table.
func readmeTable(head [2]string, rows []manEntry, codeTerms bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | %s |\n|---|---|\n", head[0], head[1])
	for _, r := range rows {
		term := r.term
		if codeTerms {
			term = "`" + term + "`"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", strings.ReplaceAll(term, "|", `\|`), strings.ReplaceAll(r.text, "|", `\|`))
	}
	return b.String()
}

// readmeBlock finds the text between a section's markers:
// "<!-- manual:NAME …-->\n" and "<!-- end manual:NAME -->".
func readmeBlock(doc, name string) (start, end int, err error) {
	open := "<!-- manual:" + name + " "
	i := strings.Index(doc, open)
	if i < 0 {
		return 0, 0, fmt.Errorf("no %q marker", open)
	}
	nl := strings.Index(doc[i:], "-->\n")
	j := strings.Index(doc, "<!-- end manual:"+name+" -->")
	if nl < 0 || j < i {
		return 0, 0, errors.New("no end marker after " + open)
	}
	return i + nl + len("-->\n"), j, nil
}

// TestREADMEManual: the README's exit codes, environment and files are
// manual.go's tables, rendered; -update-readme rewrites them.
func TestREADMEManual(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, s := range readmeSections {
		if len(s.rows) < s.wantAtLeast {
			t.Errorf("%s: %d rows", s.name, len(s.rows))
		}
		start, end, err := readmeBlock(doc, s.name)
		if err != nil {
			t.Errorf("README.md: %v", err)
			continue
		}
		want := readmeTable(s.head, s.rows, s.codeTerms)
		if got := doc[start:end]; got != want && !*updateReadme {
			t.Errorf("README.md's %s section is not manual.go's (edit cmd/cairn/cli/manual.go, then go test ./cmd/cairn/cli -run README -update-readme):\ngot:\n%s\nwant:\n%s", s.name, got, want)
		}
		doc = doc[:start] + want + doc[end:]
	}
	if *updateReadme && doc != string(data) {
		if err := os.WriteFile(readmePath, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote README.md")
	}
}
