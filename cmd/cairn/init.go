package main

import (
	"fmt"
	"os/user"
	"strconv"

	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

func (a *app) initCmd() *cobra.Command {
	var group string
	cmd := &cobra.Command{
		Use:   "init [--group NAME]",
		Short: "create a datastore (65,536 chunk directories and a lock file), readable by its owner only",
		Long: `Init creates a datastore: the directory (mode 0700), .chunks with its
65,536 prefix directories (0700) and the lock file .lock (0600), so that
no other user can read the backups or take the store's locks. With
--group NAME (as PBS's backup group) the directories are 0750 and
set-group-ID, owned by that group; lock files stay 0600 (a group member
who could open one could lock it and stall backups).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var opt store.CreateOptions
			if group != "" {
				gid, err := lookupGroup(group)
				if err != nil {
					return err
				}
				opt.Group = &gid
			}
			s, err := store.CreateWith(a.storeDir, opt)
			if err != nil {
				return err
			}
			defer s.Close()
			fmt.Fprintf(a.stdout, "created store %s\n", s.Root())
			return nil
		},
	}
	cmd.Flags().StringVar(&group, "group", "", "let this group read the store: 0750 set-group-ID directories owned by it")
	return cmd
}

// lookupGroup resolves --group: a group name, or a numeric gid.
func lookupGroup(name string) (int, error) {
	g, err := user.LookupGroup(name)
	if err != nil {
		if _, nerr := user.LookupGroupId(name); nerr != nil {
			return 0, usageErr("--group %q: no such group (%v)", name, err)
		}
		g = &user.Group{Gid: name}
	}
	gid, err := strconv.Atoi(g.Gid)
	if err != nil || gid < 0 {
		return 0, usageErr("--group %q: gid %q is not a number", name, g.Gid)
	}
	return gid, nil
}
