package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) protectCmd() *cobra.Command {
	return a.protectionCmd(true, "protect SNAPSHOT…",
		"mark snapshots protected: forget, prune and every other removal keep them",
		"Marks each snapshot [ns/NAME/…]TYPE/ID/TIME protected, as PBS does: an empty file\n"+
			".protected in the snapshot directory. Forget and prune refuse to remove it until\n"+
			"cairn unprotect. Protecting twice is no error.")
}

func (a *app) unprotectCmd() *cobra.Command {
	return a.protectionCmd(false, "unprotect SNAPSHOT…",
		"remove the protection of snapshots, so that forget and prune may remove them",
		"Removes the .protected marker of each snapshot [ns/NAME/…]TYPE/ID/TIME, as\n"+
			"PBS does: forget, prune and the other removals may remove it again.\n"+
			"Unprotecting a snapshot that is not protected is no error.")
}

func (a *app) protectionCmd(on bool, use, short, long string) *cobra.Command {
	var ns string
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			snaps, err := parseSnapshotArgs(ns, args)
			if err != nil {
				return err
			}
			s, err := a.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			done := "protected"
			if !on {
				done = "unprotected"
			}
			for _, snap := range snaps {
				if err := s.SetProtected(a.ctx, snap, on); err != nil {
					return err
				}
				if !a.quiet {
					fmt.Fprintf(a.stdout, "%s %s\n", done, snap)
				}
			}
			return nil
		},
	}
	nsFlag(cmd, &ns)
	a.lockWaitFlag(cmd)
	return cmd
}
