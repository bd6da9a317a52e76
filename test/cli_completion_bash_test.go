package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// bashWords splits a command line as bash splits it into COMP_WORDS:
// at blanks, and with each = and : a word of its own (COMP_WORDBREAKS);
// a line ending in a blank ends with an empty word.
func bashWords(line string) []string {
	var words []string
	for _, f := range strings.Fields(line) {
		words = append(words, regexp.MustCompile(`[=:]|[^=:]+`).FindAllString(f, -1)...)
	}
	if strings.HasSuffix(line, " ") {
		words = append(words, "")
	}
	return words
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestCompletionBashPlain sources `cairn completion bash` into a bash
// without the bash-completion package (no _get_comp_words_by_ref,
// _init_completion or _filedir) and completes commands, a --store=DIR
// given with =, and the archives of a snapshot whose time bash split at
// its colons.
func TestCompletionBashPlain(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	st := e2e.SharedStore(t)
	tree := t.TempDir()
	e2e.Write(t, filepath.Join(tree, "f"), "f", 0o644)
	e2e.MustCairn(t, "--store", st, "backup", "-q", "--id", "bashcomp", "--type", "host", "root.pxar:"+tree)
	snap := listSnaps(t, st, "host/bashcomp")[0].Snapshot
	bin := t.TempDir()
	if err := os.Symlink(e2e.Binary(), filepath.Join(bin, "cairn")); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(bin, "cairn.bash")
	e2e.Write(t, script, e2e.MustCairn(t, "completion", "bash").Stdout, 0o644)
	cut := snap[:strings.LastIndex(snap, ":")+2] // …T10:00:0
	cases := []struct {
		line string
		want string
	}{
		{"cairn ba", "backup"},
		{"cairn tape ex", "export"},
		{"cairn --store=" + st + " ls host/bashc", "host/bashcomp/"},
		{"cairn --store=" + st + " cat " + snap + " ", "root.pxar"},
		{"cairn --store " + st + " ls " + cut, snap[strings.LastIndex(snap, ":")+1:]}, // readline replaces the part after the last colon
	}
	prog := "source " + shQuote(script) + `
if declare -F _get_comp_words_by_ref _init_completion _filedir >/dev/null; then echo "bash-completion is loaded"; exit 9; fi
comp() { COMP_LINE=$1; COMP_POINT=${#1}; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
  __start_cairn 2>/dev/null; printf '%s\n' "${COMPREPLY[@]}"; echo "--"; }
`
	for _, c := range cases {
		prog += "comp " + shQuote(c.line)
		for _, w := range bashWords(c.line) {
			prog += " " + shQuote(w)
		}
		prog += "\n"
	}
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "BASH_ENV=", "CAIRN_STORE=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	replies := strings.Split(string(out), "--\n")
	for i, c := range cases {
		if i >= len(replies) || !slices.Contains(strings.Fields(replies[i]), c.want) {
			t.Errorf("completing %q: want %q among the candidates; bash printed:\n%s", c.line, c.want, out)
		}
	}
}
