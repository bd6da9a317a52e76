package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/dustin/go-humanize"
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
	} else {
		printVerifyReport(a.stdout, st, rep)
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

func printVerifyReport(w io.Writer, st jobs.Status, rep verify.Report) {
	state := string(st.State)
	if rep.NothingToVerify && st.State == jobs.StateOK {
		state = "nothing to verify"
	}
	fmt.Fprintf(w, "verify %s: %s\n", st.ID, state)
	fmt.Fprintf(w, "  snapshots  %d ok, %d failed, %d skipped, %d unfinished (not verified)\n",
		rep.SnapshotsOK, rep.SnapshotsFailed, rep.SnapshotsSkipped, rep.SnapshotsUnfinished)
	fmt.Fprintf(w, "  chunks     %d checked, %d corrupt or missing\n", rep.Chunks, rep.ChunksCorrupt)
	if rep.ChunksDecrypted > 0 || rep.ChunksWithoutKey > 0 {
		fmt.Fprintf(w, "  encrypted  %d decrypted and checked by keyed digest, %d checked without their key (CRC, size)\n",
			rep.ChunksDecrypted, rep.ChunksWithoutKey)
	}
	for _, r := range rep.Snapshots {
		if r.WithoutKey {
			fmt.Fprintf(w, "  no key     %s: %s\n", r.Snapshot, escapeText(r.Encryption))
		}
	}
	fmt.Fprintf(w, "  data       %s read (%s plain) in %s: %.1f MB/s\n", humanize.IBytes(uint64(rep.StoredBytes)),
		humanize.IBytes(uint64(rep.Bytes)), (time.Duration(rep.Seconds * float64(time.Second))).Round(time.Millisecond), rep.MBps)
	fmt.Fprintf(w, "  order      %s, %d read / %d verify threads (%s)\n", rep.ChunkOrder, rep.ReadThreads, rep.VerifyThreads, rep.ChunkOrderReason)
	if rep.SnapshotsFailed > 0 {
		fmt.Fprintln(w, "failed snapshots:")
		for _, r := range rep.Snapshots {
			if r.State != verify.SnapFailed {
				continue
			}
			fmt.Fprintf(w, "  %s\n", r.Snapshot)
			for _, e := range r.Errors {
				fmt.Fprintf(w, "      %s\n", escapeText(e))
			}
			if more := r.ErrorCount - len(r.Errors); more > 0 {
				fmt.Fprintf(w, "      … and %d more\n", more)
			}
		}
	}
	if len(rep.Corrupt) > 0 {
		fmt.Fprintln(w, "corrupt or missing chunks:")
		for _, c := range rep.Corrupt {
			fmt.Fprintf(w, "  %s  %s\n", c.Digest, escapeText(c.Reason))
			if c.BadPath != "" {
				fmt.Fprintf(w, "      moved to %s\n", escapeText(c.BadPath))
			}
			fmt.Fprintf(w, "      used by %s\n", strings.Join(c.Snapshots, ", "))
		}
	}
	var other []string
	for _, e := range st.Errors {
		if !aboutSnapshot(rep, e) {
			other = append(other, e)
		}
	}
	if len(other) > 0 {
		fmt.Fprintln(w, "other errors:")
		for _, e := range other {
			fmt.Fprintf(w, "  %s\n", escapeText(e))
		}
	}
	fmt.Fprintln(w, "next:")
	for _, n := range rep.Next {
		fmt.Fprintf(w, "  - %s\n", escapeText(n))
	}
}

// aboutSnapshot tells whether a job error is one listed under a snapshot.
func aboutSnapshot(rep verify.Report, e string) bool {
	for _, r := range rep.Snapshots {
		if strings.HasPrefix(e, r.Snapshot+": ") {
			return true
		}
	}
	return false
}
