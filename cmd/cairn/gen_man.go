package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// manDate is the date of SOURCE_DATE_EPOCH (reproducible builds), zero
// when unset: the pages then carry today's.
func manDate() (time.Time, error) {
	v := os.Getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, fmt.Errorf("%q: want seconds since 1970", v)
	}
	return time.Unix(n, 0).UTC(), nil
}

// genCmd holds the generators of files made from the command tree.
func (a *app) genCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "generate files from the commands: man pages",
	}
	cmd.AddCommand(a.genManCmd())
	return cmd
}

func (a *app) genManCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "write a man page (section 1) for every command into DIR",
		Long: "Writes cairn.1 and one page a command (cairn-backup.1, cairn-tape-export.1, …) into DIR,\n" +
			"creating it. 'make install' installs them under PREFIX/share/man/man1.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("gen man: %w", err)
			}
			root := cmd.Root()
			root.DisableAutoGenTag = true // pages that do not change with the day they were made
			hdr := &doc.GenManHeader{Section: "1", Source: "cairn " + buildVersion().Version, Manual: "cairn manual"}
			if t, err := manDate(); err != nil {
				return usageErr("SOURCE_DATE_EPOCH: %v", err)
			} else if !t.IsZero() {
				hdr.Date = &t // reproducible pages
			}
			if err := doc.GenManTree(root, hdr, dir); err != nil {
				return fmt.Errorf("gen man %s: %w", dir, err)
			}
			if !a.quiet {
				n, _ := filepath.Glob(filepath.Join(dir, "*.1"))
				fmt.Fprintf(a.stderr, "wrote %d man pages to %s\n", len(n), dir)
			}
			return nil
		},
	}
}
