package cli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/spf13/cobra"
)

type gcOpts struct {
	atimeCutoff string
	status      bool
	json        bool
}

func (a *app) gcCmd() *cobra.Command {
	var o gcOpts
	cmd := &cobra.Command{
		Use:   "gc [--atime-cutoff DURATION] [--status] [--json]",
		Short: "remove chunks no snapshot uses any more (garbage collection, as PBS)",
		Long: `GC removes the chunk files no snapshot references, as Proxmox Backup
Server does. Phase 1 touches (sets the access time of) every chunk any
index of any snapshot references, finished or not; phase 2 removes the
chunk files whose access time is older than the cutoff: phase 1's start
minus --atime-cutoff (default 24h5m, as PBS; 0 allowed), or the start
of the oldest backup still running less 5 minutes, whichever is older.
Chunks that became unused more recently are kept and counted as pending;
a later GC removes them. Also removed: .bad copies of chunks nothing
references or that have a good copy again, and temporary files of dead
writers. The report is saved in the store (.gc-status); --status shows
the last one. One GC runs per store at a time.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.status {
				if cmd.Flags().Changed("atime-cutoff") {
					return usageErr("--status takes no --atime-cutoff")
				}
				return a.gcStatus(o)
			}
			return a.gc(o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.atimeCutoff, "atime-cutoff", gc.DefaultAtimeCutoff.String(),
		"keep unused chunks touched this recently (e.g. 24h5m, 30m, 0: remove every unused chunk no running backup may need)")
	f.BoolVar(&o.status, "status", false, "show the last GC's report instead of running one")
	f.BoolVar(&o.json, "json", false, "print the report as JSON")
	a.lockWaitFlag(cmd)
	return cmd
}

func (a *app) gc(o gcOpts) error {
	if _, err := gc.ParseAtimeCutoff(o.atimeCutoff); err != nil {
		return usageErr("--atime-cutoff %q: %v", o.atimeCutoff, err)
	}
	// warnings; with -v the phases as they end
	st, err := a.runJob(gc.KindName, map[string]string{"atime-cutoff": o.atimeCutoff}, slog.LevelWarn, a.jobProgressOf("gc", "items"))
	if err != nil {
		return err
	}
	rep, _ := st.Result.(gc.Report)
	if o.json {
		if err := printJSON(a, rep); err != nil {
			return err
		}
	} else if !a.quiet { // -q: the exit code and errors only
		rep.WriteText(a.stdout)
	}
	switch st.State {
	case jobs.StateOK:
		return nil
	case jobs.StateCancelled:
		return &codeError{exitError, errors.New("gc cancelled")}
	}
	msg := rep.Error
	if msg == "" && len(st.Errors) > 0 {
		msg = st.Errors[0]
	}
	return &codeError{exitError, fmt.Errorf("gc failed: %s", msg)}
}

func (a *app) gcStatus(o gcOpts) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	rep, ok, err := gc.ReadStatus(s)
	if err != nil {
		return err
	}
	if o.json {
		if !ok {
			_, err := fmt.Fprintln(a.stdout, "null")
			return err
		}
		return printJSON(a, rep)
	}
	if !ok {
		fmt.Fprintln(a.stdout, "no GC has run on this store")
		return nil
	}
	rep.WriteText(a.stdout)
	return nil
}
