package cli

import (
	"fmt"
	"time"

	"github.com/cairnfs/cairn/internal/manpage"
	"github.com/spf13/cobra"
)

// genCmd holds the generators of files made from the command tree.
func (a *app) genCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "generate files from the commands: man pages",
		Long: `Generates files from the command tree and the manual's text, so that
they say what the commands do: the man pages.`,
	}
	cmd.AddCommand(a.genManCmd())
	return cmd
}

func (a *app) genManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "write a man page (section 1) for every command into DIR",
		Long: `Writes cairn.1 and one page a command (cairn-backup.1, cairn-tape-export.1,
…) into DIR, creating it. cairn.1 has the description, options, examples,
exit status, environment and files; a command's page its description,
options, examples and exit status. The pages are dated
$SOURCE_DATE_EPOCH when set, else today. 'make install' installs them
under PREFIX/share/man/man1.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := manpage.SourceDate()
			if err != nil {
				return usageErr("SOURCE_DATE_EPOCH: %v", err)
			}
			if t.IsZero() {
				t = time.Now()
			}
			n, err := manpage.Write(cmd.Root(), args[0], manual(t, "cairn "+buildVersion().Version))
			if err != nil {
				return err
			}
			if !a.quiet {
				fmt.Fprintf(a.stderr, "wrote %d man pages to %s\n", n, args[0])
			}
			return nil
		},
	}
}

// manual is the manual's content (manual.go, manual_examples.go) for
// pages dated date from source.
func manual(date time.Time, source string) manpage.Manual {
	m := manpage.Manual{Date: date, Source: source, Examples: map[string][]manpage.Example{},
		ExitStatus: manEntries(exitStatuses), Environment: manEntries(environment), Files: manEntries(files)}
	for path, ex := range examples {
		for _, e := range ex {
			m.Examples[path] = append(m.Examples[path], manpage.Example{What: e.what, Sh: e.sh})
		}
	}
	return m
}

func manEntries(rows []manEntry) []manpage.Entry {
	out := make([]manpage.Entry, len(rows))
	for i, r := range rows {
		out[i] = manpage.Entry{Term: r.term, Text: r.text}
	}
	return out
}
