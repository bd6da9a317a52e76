package bashcomp

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestScript: cobra's part of the script calls the stand-ins, never
// bash-completion's functions, and the stand-ins follow it.
func TestScript(t *testing.T) {
	root := &cobra.Command{Use: "cairn"}
	root.AddCommand(&cobra.Command{Use: "ls", Run: func(*cobra.Command, []string) {}})
	s, err := Script(root, true)
	if err != nil {
		t.Fatal(err)
	}
	cobras, ok := strings.CutSuffix(s, bashFallbacks)
	if !ok || strings.Contains(cobras, bashWordsCall) || bashFiledir.MatchString(cobras) {
		t.Error("the script still calls bash-completion's functions")
	}
	for _, want := range []string{"__cairn_get_words \"$@\" cur prev words cword", "__cairn_filedir"} {
		if !strings.Contains(cobras, want) {
			t.Errorf("the script lacks %q", want)
		}
	}
}
