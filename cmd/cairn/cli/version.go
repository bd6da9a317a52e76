package cli

import (
	"fmt"

	"github.com/cairnfs/cairn/internal/buildinfo"
	"github.com/spf13/cobra"
)

// Set at build time (see the Makefile):
//
//	cli=github.com/cairnfs/cairn/cmd/cairn/cli
//	go build -ldflags "-X $cli.version=1.2.0 -X $cli.commit=abc123 -X $cli.commitTime=2026-12-01T10:00:00Z -X $cli.dirty=true" ./cmd/cairn
//
// Left empty, they come from debug.ReadBuildInfo: the module version
// (go install …@v1.2.0) and the vcs.* settings go build records in a
// git checkout (not with -buildvcs=false).
var version, commit, commitTime, dirty string

// buildVersion puts together the -X values and the build information.
func buildVersion() buildinfo.Info { return buildinfo.Read(version, commit, commitTime, dirty) }

func (a *app) versionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version, the Go version and the commit cairn was built from",
		Long: `Prints the version, the Go version, the platform and the commit cairn
was built from (with -dirty when the tree had changes, and the commit's
time). They are set with -ldflags -X, as the Makefile does; without them
cairn takes them from the build information Go records. cairn --version
prints the same line.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := buildVersion()
			if asJSON {
				return printJSON(a, v)
			}
			_, err := fmt.Fprintf(a.stdout, "cairn %s\n", v)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
