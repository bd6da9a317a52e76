package main

import (
	"fmt"

	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

func (a *app) initCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "create a datastore (65,536 chunk directories and a lock file)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := store.Create(a.storeDir)
			if err != nil {
				return err
			}
			defer s.Close()
			fmt.Fprintf(a.stdout, "created store %s\n", s.Root())
			return nil
		},
	}
}
