package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

// Outcomes of one snapshot in a forget.
const (
	forgetRemoved     = "removed"
	forgetWouldRemove = "would_remove" // --dry-run
	forgetProtected   = "protected"
	forgetLocked      = "locked"
	forgetNotFound    = "not_found"
	forgetFailed      = "failed"
)

// forgetResult is one snapshot's outcome.
type forgetResult struct {
	Snapshot string `json:"snapshot"`
	Finished bool   `json:"finished"`
	State    string `json:"state"`
	Error    string `json:"error,omitempty"`
}

// forgetReport is what forget prints with --json.
type forgetReport struct {
	DryRun     bool           `json:"dry_run"`
	Snapshots  []forgetResult `json:"snapshots"`
	Group      string         `json:"group,omitempty"`
	GroupState string         `json:"group_state,omitempty"` // --group: removed, would_remove, kept
	Removed    int            `json:"removed"`
	Refused    int            `json:"refused"`
	NextStep   string         `json:"next_step,omitempty"`
}

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
	rep := &forgetReport{DryRun: o.dryRun, Snapshots: []forgetResult{}}
	if o.group {
		if err := forgetGroup(a.ctx, s, group, o.dryRun, rep); err != nil {
			return err
		}
	} else {
		for _, snap := range snaps {
			rep.add(forgetOne(a.ctx, s, snap, o.dryRun))
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

// forgetOne removes (or, dry, judges) one snapshot.
func forgetOne(ctx context.Context, s *store.Store, snap store.Snapshot, dry bool) forgetResult {
	r := forgetResult{Snapshot: snap.String(), State: forgetRemoved}
	_, err := os.Stat(s.SnapshotPath(snap) + "/" + store.ManifestName)
	r.Finished = err == nil
	if dry {
		r.State = forgetWouldRemove
		err = s.CanForget(ctx, snap)
	} else {
		err = s.ForgetSnapshot(ctx, snap)
	}
	if err != nil {
		r.State, r.Error = forgetState(err), err.Error()
	}
	return r
}

func forgetState(err error) string {
	switch {
	case errors.Is(err, store.ErrProtected):
		return forgetProtected
	case errors.Is(err, store.ErrLocked):
		return forgetLocked
	case errors.Is(err, store.ErrNotFound):
		return forgetNotFound
	}
	return forgetFailed
}

func (r *forgetReport) add(res forgetResult) {
	r.Snapshots = append(r.Snapshots, res)
	switch res.State {
	case forgetRemoved, forgetWouldRemove:
		r.Removed++
	default:
		r.Refused++
		switch res.State {
		case forgetProtected:
			r.NextStep = "protected snapshots stay: cairn unprotect SNAPSHOT allows their removal"
		case forgetLocked:
			if r.NextStep == "" {
				r.NextStep = "locked snapshots are in use (a backup builds on them, or a verify, tape export or restore reads them): forget them once that ends"
			}
		}
	}
}

// forgetGroup removes (or, dry, judges) every snapshot of g and then g.
func forgetGroup(ctx context.Context, s *store.Store, g store.Group, dry bool, rep *forgetReport) error {
	rep.Group = g.String()
	snaps, err := s.Snapshots(g)
	if err != nil {
		return err
	}
	if dry {
		for _, si := range snaps {
			rep.add(forgetOne(ctx, s, si.Snapshot, true))
		}
		rep.GroupState = forgetWouldRemove
		if rep.Refused > 0 {
			rep.GroupState = "kept"
		}
		return nil
	}
	removed, err := s.ForgetGroup(ctx, g)
	for _, snap := range removed {
		rep.add(forgetResult{Snapshot: snap.String(), State: forgetRemoved, Finished: finishedIn(snaps, snap)})
	}
	rep.GroupState = forgetRemoved
	if err == nil {
		return nil
	}
	rep.GroupState = "kept"
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var se *store.SnapshotError
		if !errors.As(e, &se) {
			if len(removed) == 0 && len(rep.Snapshots) == 0 && errors.Is(e, store.ErrLocked) {
				return e // the group's own lock: a backup of it runs
			}
			rep.Refused++
			rep.NextStep = fmt.Sprintf("group %s kept: %v", g, e)
			continue
		}
		rep.add(forgetResult{Snapshot: se.Snapshot.String(), Finished: finishedIn(snaps, se.Snapshot),
			State: forgetState(se.Err), Error: se.Err.Error()})
	}
	return nil
}

func finishedIn(snaps []store.SnapshotInfo, snap store.Snapshot) bool {
	for _, si := range snaps {
		if si.Snapshot == snap {
			return si.Finished
		}
	}
	return false
}

func (a *app) printForget(o forgetOpts, rep *forgetReport) {
	if o.json {
		printJSON(a, rep)
		return
	}
	stdout := a.stdout
	if a.quiet { // -q: what was refused only
		stdout = io.Discard
	}
	for _, r := range rep.Snapshots {
		what := r.Snapshot
		if !r.Finished {
			what += " (unfinished)"
		}
		switch r.State {
		case forgetRemoved:
			fmt.Fprintf(stdout, "removed %s\n", what)
		case forgetWouldRemove:
			fmt.Fprintf(stdout, "would remove %s\n", what)
		case forgetProtected:
			fmt.Fprintf(a.stderr, "refused %s: it is protected; 'cairn unprotect %s' allows its removal\n", what, r.Snapshot)
		default:
			fmt.Fprintf(a.stderr, "refused %s: %s\n", what, escapeText(r.Error))
		}
	}
	switch rep.GroupState {
	case forgetRemoved:
		fmt.Fprintf(stdout, "removed group %s\n", rep.Group)
	case forgetWouldRemove:
		fmt.Fprintf(stdout, "would remove group %s\n", rep.Group)
	case "kept":
		if rep.DryRun {
			fmt.Fprintf(a.stderr, "would keep group %s: not every snapshot of it would be removed\n", rep.Group)
		} else {
			fmt.Fprintf(a.stderr, "kept group %s: not every snapshot of it could be removed\n", rep.Group)
		}
	}
	if rep.Removed > 0 && !rep.DryRun {
		fmt.Fprintln(stdout, "the chunks they used stay until garbage collection removes them (cairn gc)")
	}
}
