package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/spf13/cobra"
)

type verifyOpts struct {
	ns             string
	order          string
	readThreads    int
	verifyThreads  int
	ignoreVerified bool
	outdatedAfter  int
	json           bool
}

func (a *app) verifyCmd() *cobra.Command {
	var o verifyOpts
	cmd := &cobra.Command{
		Use:   "verify [--ns NS] [SNAPSHOT…]",
		Short: "check snapshots and every chunk they use; corrupt chunks are moved aside",
		Long: `Verify checks each snapshot's manifest, blobs and indexes against the
manifest, then every chunk they use once: CRC, decompression, SHA-256 and
size (encrypted chunks: CRC only). A chunk that fails twice is renamed
<digest>.N.bad; each snapshot's manifest records verify_state ok or failed.
Without SNAPSHOT arguments it verifies the namespace --ns and those below
it (default: the whole store). Exit code 3 means something failed.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			params, err := o.params(cmd, args)
			if err != nil {
				return err
			}
			return a.verify(o, params)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.ns, "ns", "", "namespace to verify, with those below it (snapshot arguments are taken in it)")
	f.StringVar(&o.order, "chunk-order", jobs.OrderAuto, "chunk read order: inode (best on spinning disks), index, or auto")
	f.IntVar(&o.readThreads, "read-threads", verify.DefaultReadThreads, "chunk reading threads (1-32)")
	f.IntVar(&o.verifyThreads, "verify-threads", verify.DefaultVerifyThreads, "chunk checking threads (1-32)")
	f.BoolVar(&o.ignoreVerified, "ignore-verified", false, "skip snapshots whose last verification was ok")
	f.IntVar(&o.outdatedAfter, "outdated-after", 0, "with --ignore-verified: verify again when the last verification is older than DAYS")
	f.BoolVar(&o.json, "json", false, "print the final status as JSON")
	a.keyfileFlags(cmd, false)
	a.lockWaitFlag(cmd)
	return cmd
}

// params turns the flags into the job's key=value parameters; the job
// checks them, as it checks a control file's.
func (o verifyOpts) params(cmd *cobra.Command, args []string) (map[string]string, error) {
	p := map[string]string{
		"chunk-order":    o.order,
		"read-threads":   strconv.Itoa(o.readThreads),
		"verify-threads": strconv.Itoa(o.verifyThreads),
	}
	if o.ns != "" {
		p["ns"] = o.ns
	}
	if o.ignoreVerified {
		p["ignore-verified"] = "true"
	}
	if cmd.Flags().Changed("outdated-after") {
		p["outdated-after"] = strconv.Itoa(o.outdatedAfter)
	}
	refs, err := refArgs(o.ns, args, true)
	if err != nil {
		return nil, err
	}
	if err := listParam(p, "snapshots", refs); err != nil {
		return nil, err
	}
	return p, nil
}

func (a *app) verify(o verifyOpts, params map[string]string) error {
	// errors as they are found; the rest is in the report
	st, err := a.runJob(verify.Kind{}.Name(), params, slog.LevelWarn, a.jobProgressOf("verify", "chunks"))
	if err != nil {
		return err
	}
	rep, _ := st.Result.(verify.Report)
	if o.json {
		if err := printJSON(a, st); err != nil {
			return err
		}
	} else if !a.quiet { // -q: the exit code and errors only
		rep.WriteText(a.stdout, st)
	}
	return verifyExit(st, rep)
}

func verifyExit(st jobs.Status, rep verify.Report) error {
	switch {
	case st.State == jobs.StateCancelled:
		return &codeError{exitError, errors.New("verify cancelled")}
	case rep.SnapshotsFailed > 0 || rep.ChunksCorrupt > 0:
		return &codeError{exitPartial, fmt.Errorf("verify failed: %d snapshot(s) failed, %d chunk(s) corrupt or missing",
			rep.SnapshotsFailed, rep.ChunksCorrupt)}
	case st.State != jobs.StateOK:
		msg := "verify failed"
		if len(st.Errors) > 0 {
			msg += ": " + st.Errors[0]
		}
		return &codeError{exitError, errors.New(msg)}
	}
	return nil
}
