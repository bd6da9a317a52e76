package cli

import (
	"fmt"

	"github.com/cairnfs/cairn/internal/bashcomp"
	"github.com/spf13/cobra"
)

// useBashCompletion makes cobra's `completion bash` print bashcomp.Script.
func useBashCompletion(root *cobra.Command) {
	bash, _, err := root.Find([]string{"completion", "bash"})
	if err != nil || bash.Name() != "bash" {
		return // no completion command: nothing to change
	}
	bash.Long = `Prints the bash completion script of cairn: it completes commands, flags,
snapshot names, archives and paths inside file archives (read from the
store). It works in a plain bash as well as with the bash-completion
package.

To load it in the current shell:

	source <(cairn completion bash)

For every new shell, add that line to ~/.bashrc; or, where the
bash-completion package is installed, write the script where it loads
it from ('make install' does):

	cairn completion bash > /usr/share/bash-completion/completions/cairn`
	bash.RunE = func(cmd *cobra.Command, _ []string) error {
		noDesc, _ := cmd.Flags().GetBool("no-descriptions")
		s, err := bashcomp.Script(cmd.Root(), !noDesc)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(cmd.OutOrStdout(), s)
		return err
	}
	bash.Run = nil
}
