package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/prune"
	"github.com/spf13/cobra"
)

type pruneOpts struct {
	all    bool
	ns     string
	keep   [6]int
	dryRun bool
	json   bool
}

// pruneKeepFlags are the keep options, in the order PBS applies them.
var pruneKeepFlags = [6]string{"keep-last", "keep-hourly", "keep-daily", "keep-weekly", "keep-monthly", "keep-yearly"}

func (a *app) pruneCmd() *cobra.Command {
	var o pruneOpts
	cmd := &cobra.Command{
		Use:   "prune ([ns/NAME/…]TYPE/ID | --all [--ns NS]) [--keep-last N] [--keep-hourly N] … [--dry-run] [--json]",
		Short: "remove a group's snapshots that no keep rule keeps (PBS's retention rules)",
		Long: `Prune applies Proxmox Backup Server's retention rules to a group (or with
--all to every group of --ns and the namespaces below it): snapshots are
taken newest first; the newest unfinished snapshot is kept (keep-partial)
while no finished one is newer, other unfinished ones are removed; then
--keep-last, --keep-hourly, --keep-daily, --keep-weekly (ISO weeks),
--keep-monthly and --keep-yearly each keep the newest snapshot of up to N
periods (local time) not covered by a snapshot an earlier rule kept.
Protected snapshots are never removed; without any keep option nothing is
removed. A snapshot in use (a backup building on it, a verify, a tape
export or a restore reading it) is skipped with a message. Chunks are
freed by the next gc. --dry-run also says what the plan would free: the
stored bytes of the chunks only the removed snapshots reference (those
shared among them count), as the next gc would remove them, and the
snapshots' own files (one pass over every index, as cairn du). Exit code
3 means some removal failed.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("prune: give one group, not %d arguments (or --all)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			params, err := o.params(cmd, args)
			if err != nil {
				return err
			}
			return a.prune(o, params)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.all, "all", false, "prune every group of --ns and of the namespaces below it")
	f.StringVar(&o.ns, "ns", "", "namespace: with --all, where to prune; with a group, where the group is")
	for i, name := range pruneKeepFlags {
		f.IntVar(&o.keep[i], name, 0, "keep this many periods (0: rule not given)")
	}
	f.BoolVar(&o.dryRun, "dry-run", false, "show what would be removed and change nothing")
	f.BoolVar(&o.json, "json", false, "print the final status as JSON")
	a.lockWaitFlag(cmd)
	return cmd
}

// params turns the flags into the job's key=value parameters; the job
// checks them, as it checks a control file's.
func (o pruneOpts) params(cmd *cobra.Command, args []string) (map[string]string, error) {
	p := map[string]string{}
	switch {
	case o.all && len(args) > 0:
		return nil, usageErr("prune: give a group or --all, not both")
	case !o.all && len(args) == 0:
		return nil, usageErr("prune: give a group, [ns/NAME/…]TYPE/ID, or --all")
	case o.all:
		p["all"] = "true"
	default:
		g, err := parseGroupArg(o.ns, args[0])
		if err != nil {
			return nil, err
		}
		p["group"] = g.String()
	}
	if o.ns != "" && o.all {
		p["ns"] = o.ns
	}
	for i, name := range pruneKeepFlags {
		if cmd.Flags().Changed(name) {
			p[name] = strconv.Itoa(o.keep[i])
		}
	}
	if o.dryRun {
		p["dry-run"] = "true"
	}
	return p, nil
}

func (a *app) prune(o pruneOpts, params map[string]string) error {
	// errors as they happen; the rest is in the report
	st, err := a.runJob(prune.Kind{}.Name(), params, slog.LevelWarn, a.jobProgressOf("prune", "groups"))
	if err != nil {
		return err
	}
	rep, _ := st.Result.(prune.Report)
	if o.json {
		if err := printJSON(a, st); err != nil {
			return err
		}
	} else if !a.quiet { // -q: the exit code and errors only
		rep.WriteText(a.stdout, st)
	}
	return pruneExit(st, rep)
}

func pruneExit(st jobs.Status, rep prune.Report) error {
	switch {
	case st.State == jobs.StateCancelled:
		return &codeError{exitError, errors.New("prune cancelled")}
	case rep.Failed > 0:
		return &codeError{exitPartial, fmt.Errorf("prune: %d snapshot(s) could not be removed", rep.Failed)}
	case st.State != jobs.StateOK:
		msg := "prune failed"
		if len(st.Errors) > 0 {
			msg += ": " + st.Errors[0]
		}
		return &codeError{exitError, errors.New(msg)}
	}
	return nil
}
