package cli

import (
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/daemon"
	"github.com/cairnfs/cairn/internal/manpage"
	"github.com/spf13/cobra"
)

// TestManualExamplesRun checks every example: its command exists, and
// each "cairn …" in its lines (also after a pipe) names a command whose
// flags and argument count it satisfies. Every command with a man page
// has examples.
func TestManualExamplesRun(t *testing.T) {
	root := (&app{getenv: os.Getenv}).rootCmd()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if len(examples[c.CommandPath()]) == 0 {
			t.Errorf("%s has no examples", c.CommandPath())
		}
		for _, sub := range manpage.Children(c) {
			walk(sub)
		}
	}
	walk(root)
	n := 0
	for path, exs := range examples {
		if c, _, err := root.Find(strings.Fields(path)[1:]); err != nil || c.CommandPath() != path {
			t.Errorf("examples of %q: no such command", path)
		}
		for _, e := range exs {
			for _, words := range shellCommands(t, e.sh) {
				if len(words) > 0 && words[0] == "cairn" {
					n++
					if err := checkCommandLine(words[1:]); err != nil {
						t.Errorf("example %q of %s: %v", strings.Join(words, " "), path, err)
					}
				}
			}
		}
	}
	if n < 60 {
		t.Errorf("checked %d example command lines only", n)
	}
}

// checkCommandLine parses args as cairn would, without running them.
func checkCommandLine(args []string) error {
	root := (&app{getenv: os.Getenv}).rootCmd() // flags keep state: a tree for each line
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	if !c.Runnable() || c.HasSubCommands() {
		return usageErr("%s needs a command", c.CommandPath())
	}
	return c.ValidateArgs(c.Flags().Args())
}

// TestManualExamplesCheckerFails: the checker finds a wrong flag, a
// missing argument and a command that does not exist.
func TestManualExamplesCheckerFails(t *testing.T) {
	for _, line := range []string{"cairn backup --no-such-flag x.img:/y", "cairn cat vm/100/latest",
		"cairn frobnicate", "cairn tape", "cairn ls --ns"} {
		if err := checkCommandLine(shellCommands(t, line)[0][1:]); err == nil {
			t.Errorf("%q passes", line)
		}
	}
	if err := checkCommandLine(shellCommands(t, "cairn --store /s restore vm/1/latest d.img - --discard")[0][1:]); err != nil {
		t.Errorf("a good line fails: %v", err)
	}
}

// shellCommands splits sh into its simple commands' words: quotes and
// backslashes as sh reads them, a command ending at a newline, |, &, ;,
// <, >, ( or ). Enough for the examples, which use nothing else.
func shellCommands(t *testing.T, sh string) [][]string {
	t.Helper()
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	end := func(cmd bool) {
		if inWord {
			words = append(words, w.String())
			w.Reset()
			inWord = false
		}
		if cmd && len(words) > 0 {
			cmds = append(cmds, words)
			words = nil
		}
	}
	rs := []rune(sh)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == '\'' || quote == '"' && c != '\\':
			w.WriteRune(c)
		case c == '\\' && i+1 < len(rs):
			if i++; rs[i] != '\n' {
				w.WriteRune(rs[i])
				inWord = true
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			end(false)
		case strings.ContainsRune("\n|&;<>()", c):
			end(true)
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unterminated quote in %q", sh)
	}
	end(true)
	return cmds
}

func TestShellCommands(t *testing.T) {
	got := shellCommands(t, "pg_dump 'my db' | cairn backup \\\n  --id \"a b\" x.img:- > /dev/null\necho $(cairn version)")
	want := [][]string{{"pg_dump", "my db"}, {"cairn", "backup", "--id", "a b", "x.img:-"}, {"/dev/null"}, {"echo", "$"}, {"cairn", "version"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// internalEnv are variables cairn sets for itself, not for users.
var internalEnv = map[string]string{daemon.Env: "set by mount --daemon for its child"}

// TestManualEnvironmentComplete: the variables the manual lists are
// the ones the packages linked into cairn name (a "CAIRN_…", "AWS_…" or
// "SOURCE_DATE_EPOCH" string), no more and no fewer.
func TestManualEnvironmentComplete(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f",
		`{{if .Module}}{{if eq .Module.Path "github.com/cairnfs/cairn"}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}{{end}}`,
		".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	named := map[string]bool{}
	re := regexp.MustCompile(`"((?:CAIRN|AWS)_[A-Z0-9_]+|SOURCE_DATE_EPOCH)"`)
	for file := range strings.Lines(string(out)) {
		src, err := os.ReadFile(strings.TrimSpace(file))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			named[m[1]] = true
		}
	}
	listed := map[string]bool{}
	for _, e := range environment {
		listed[e.term] = true
		if !named[e.term] {
			t.Errorf("the manual lists %s, which cairn does not read", e.term)
		}
	}
	for name := range named {
		if !listed[name] && internalEnv[name] == "" {
			t.Errorf("cairn reads %s, which the manual (manual.go's environment) does not list", name)
		}
	}
	if len(named) < 10 {
		t.Errorf("found %d variables only: %v", len(named), named)
	}
}
