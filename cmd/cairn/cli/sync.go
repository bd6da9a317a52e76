package cli

import (
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/cairnfs/cairn/jobs/storesync"
	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

type syncOpts struct {
	from, to       string
	ns             string
	removeVanished bool
	workers        int
	json           bool
}

func (a *app) syncCmd() *cobra.Command {
	var o syncOpts
	cmd := &cobra.Command{
		Use:   "sync --from STORE [--to STORE] [SNAPSHOT | GROUP | --ns NS] [--remove-vanished] [--json]",
		Short: "copy snapshots from one store to another, moving only missing chunks (PBS's sync job, restic's copy)",
		Long: `Sync copies the finished snapshots of the store --from into the store --to
(default: --store): one snapshot ([ns/NAME/…]TYPE/ID/TIME or …/latest), every
snapshot of a group ([ns/NAME/…]TYPE/ID), or every group of --ns and of the
namespaces below it (default: the whole store). Either store may be local or
on object storage. Groups are copied oldest snapshot first; as in Proxmox
Backup Server, only snapshots newer than the target group's newest are added,
and one the target has is skipped. Chunks the target has are not copied; every
chunk copied is checked against its digest, every index and blob against the
source's manifest, and each snapshot's manifest is written last, so a sync cut
short leaves no complete-looking snapshot. The source's verify state is not
copied. --remove-vanished then removes the target's snapshots of the selected
groups that the source no longer has (protected ones are kept). Exit code 3
means some snapshots failed.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageErr("sync: give one snapshot or group, not %d arguments (or --ns)", len(args))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			params, err := o.params(args)
			if err != nil {
				return err
			}
			if o.to != "" {
				a.storeDir = o.to
			}
			return a.sync(o, params)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.from, "from", "", "the source store's directory")
	f.StringVar(&o.to, "to", "", "the target store's directory (default: --store)")
	f.StringVar(&o.ns, "ns", "", "namespace: without an argument, what to copy; with one, where it is")
	f.BoolVar(&o.removeVanished, "remove-vanished", false, "remove the target's snapshots of the selected groups the source no longer has")
	f.IntVar(&o.workers, "workers", 0, "chunks copied at once (0: the number of CPUs, at least 4; more for a store in a bucket)")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	a.lockWaitFlag(cmd)
	return cmd
}

// params turns the flags into the job's key=value parameters; the job
// checks them, as it checks a control file's.
func (o syncOpts) params(args []string) (map[string]string, error) {
	if o.from == "" {
		return nil, usageErr("sync: give the source store, --from DIR")
	}
	from, err := filepath.Abs(o.from)
	if err != nil {
		return nil, usageErr("sync --from %q: %v", o.from, err)
	}
	p := map[string]string{"from": from}
	if len(args) == 1 {
		if _, err := store.ParseRef(args[0]); err != nil {
			return nil, usageErr("sync: %v", err)
		}
		key := "snapshot"
		if storesync.IsGroupRef(args[0]) {
			key = "group"
		}
		p[key] = args[0]
	}
	if o.ns != "" {
		p["ns"] = o.ns
	}
	if o.removeVanished {
		p["remove-vanished"] = "true"
	}
	if o.workers != 0 {
		p["workers"] = strconv.Itoa(o.workers)
	}
	return p, nil
}

func (a *app) sync(o syncOpts, params map[string]string) error {
	st, err := a.runJob(storesync.KindName, params, slog.LevelWarn, a.jobProgressOf("sync", "snapshots"))
	if err != nil {
		return err
	}
	rep, _ := st.Result.(storesync.Report)
	if o.json {
		if err := printJSON(a, rep); err != nil {
			return err
		}
	} else if !a.quiet { // -q: the exit code and errors only
		rep.WriteText(a.stdout, st)
	}
	return jobExit("sync", st, rep.SnapshotsFailed)
}
