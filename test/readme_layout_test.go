package test

import (
	"bufio"
	"os"
	"os/exec"
	"path"
	"regexp"
	"strings"
	"testing"
)

// layoutRow is one row of the README's table "Layout of this
// repository": the paths its first column names and its whole text.
type layoutRow struct {
	names []string
	text  string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readmeLayout reads the table from ../README.md.
func readmeLayout(t *testing.T) []layoutRow {
	t.Helper()
	f, err := os.Open("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []layoutRow
	in := false
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = line == "## Layout of this repository"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		var row layoutRow
		for _, m := range backticked.FindAllStringSubmatch(first, -1) {
			row.names = append(row.names, m[1])
		}
		row.text = line
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("README.md has no table under \"## Layout of this repository\"")
	}
	return rows
}

// TestReadmeLayout: the README's layout table matches the tree. Every
// package of the module is named in some row (in backquotes), or its
// parent's row names it by its last element; every path a row's first
// column names is a directory of the repository (a row `dir/…` stands
// for dir's subpackages, which its text names).
func TestReadmeLayout(t *testing.T) {
	rows := readmeLayout(t)
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root = path.Dir(root)
	for _, dir := range strings.Fields(string(out)) {
		p := strings.TrimPrefix(strings.TrimPrefix(dir, root), "/")
		if p == "" || layoutNames(rows, p) {
			continue
		}
		t.Errorf("README.md's layout table does not name package %s (a row of its own, or `%s` in the row of %s)", p, path.Base(p), path.Dir(p))
	}
	for _, r := range rows {
		for _, n := range r.names {
			dir := "../" + strings.TrimSuffix(n, "/…")
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				t.Errorf("README.md's layout table names %s, which is no directory of the repository", n)
			}
		}
	}
}

// layoutNames tells whether the rows name package p.
func layoutNames(rows []layoutRow, p string) bool {
	parent, base := path.Dir(p), path.Base(p)
	for _, r := range rows {
		if strings.Contains(r.text, "`"+p+"`") {
			return true
		}
		for _, n := range r.names {
			if (n == parent || n == parent+"/…") && strings.Contains(r.text, "`"+base+"`") {
				return true
			}
		}
	}
	return false
}
