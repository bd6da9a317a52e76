package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/forget"
	"github.com/spf13/cobra"
)

type forgetOpts struct {
	ns     string
	group  bool
	dryRun bool
	json   bool
}

func (a *app) forgetCmd() *cobra.Command {
	var o forgetOpts
	cmd := &cobra.Command{
		Use:   "forget SNAPSHOT… | forget --group [ns/NAME/…]TYPE/ID",
		Short: "remove snapshots (finished or unfinished) or a whole group; protected and locked ones are refused",
		Long: "Removes the snapshots named [ns/NAME/…]TYPE/ID/TIME, finished or unfinished, or with\n" +
			"--group every snapshot of a group and then the group. A protected snapshot (cairn protect)\n" +
			"is refused, and so is one a backup, verify, tape export or restore is using (the lock's\n" +
			"holder is named); the others are removed, and the exit code is 3 when anything was refused.\n" +
			"The chunks the snapshots used stay until garbage collection (cairn gc) removes them.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return a.forget(o, args)
		},
	}
	cmd.Flags().BoolVar(&o.group, "group", false, "remove the whole group named by the argument ([ns/NAME/…]TYPE/ID)")
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "print what would be removed; change nothing")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the outcome as JSON")
	nsFlag(cmd, &o.ns)
	a.lockWaitFlag(cmd) // --group: the group's backup lock (a snapshot's lock is never waited for)
	return cmd
}

func (a *app) forget(o forgetOpts, args []string) error {
	if o.group && len(args) != 1 {
		return usageErr("--group takes one group, [ns/NAME/…]TYPE/ID; %d given", len(args))
	}
	var snaps []store.Snapshot
	var group store.Group
	if o.group {
		g, err := parseGroupArg(o.ns, args[0])
		if err != nil {
			return err
		}
		group = g
	} else {
		var err error
		if snaps, err = parseSnapshotArgs(o.ns, args); err != nil {
			return err
		}
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	rep := &forget.Report{DryRun: o.dryRun, Snapshots: []forget.Result{}}
	if o.group {
		if err := forget.Group(a.ctx, s, group, o.dryRun, rep); err != nil {
			return err
		}
	} else {
		for _, snap := range snaps {
			rep.Add(forget.One(a.ctx, s, snap, o.dryRun))
		}
	}
	a.printForget(o, rep)
	if rep.Refused > 0 {
		return &codeError{code: exitPartial, err: fmt.Errorf("forget: %d of %d snapshots refused or failed", rep.Refused, len(rep.Snapshots))}
	}
	return nil
}

// parseSnapshotArg parses a snapshot named with its time, in namespace
// ns (--ns): forget and protect take no "latest", whose meaning moves.
func parseSnapshotArg(ns, arg string) (store.Snapshot, error) {
	r, err := parseRefIn(ns, arg)
	if err != nil {
		return store.Snapshot{}, err
	}
	if r.Latest {
		return store.Snapshot{}, usageErr("snapshot %q: name it with its time, [ns/NAME/…]TYPE/ID/TIME (cairn snapshots lists them); a group is removed with --group", arg)
	}
	return r.Snapshot, nil
}

// parseSnapshotArgs parses each argument with parseSnapshotArg.
func parseSnapshotArgs(ns string, args []string) ([]store.Snapshot, error) {
	snaps := make([]store.Snapshot, 0, len(args))
	for _, arg := range args {
		snap, err := parseSnapshotArg(ns, arg)
		if err != nil {
			return nil, err
		}
		snaps = append(snaps, snap)
	}
	return snaps, nil
}

// parseGroupArg parses "[ns/NAME/…]TYPE/ID" in namespace ns (--ns).
func parseGroupArg(ns, arg string) (store.Group, error) {
	trimmed := strings.Trim(arg, "/")
	r, err := parseRefIn(ns, trimmed)
	if err != nil {
		return store.Group{}, fmt.Errorf("group %q: %w", arg, err)
	}
	if !r.Latest || strings.HasSuffix(trimmed, "/latest") {
		return store.Group{}, usageErr("group %q: want [ns/NAME/…]TYPE/ID, without a snapshot time", arg)
	}
	return r.Group, nil
}

func (a *app) printForget(o forgetOpts, rep *forget.Report) {
	if o.json {
		printJSON(a, rep)
		return
	}
	stdout := a.stdout
	if a.quiet { // -q: what was refused only
		stdout = io.Discard
	}
	rep.WriteText(stdout, a.stderr)
}
