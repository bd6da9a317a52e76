package cli

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

func (a *app) tapeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tape",
		Short: "export snapshots to tape and restore them (virtual tape drive, PBS tape format)",
		Long: `The tape commands write snapshots to, and read them back from, a virtual
tape drive: a directory holding tapes as files, in Proxmox Backup Server's
tape format. A media pool hands out tapes; a media set spans the tapes one
export series writes; a media catalog per tape (beside the drive) says
which chunks and snapshots are in which tape file.

Make a new drive with mkdir; export creates and labels tapes of
--tape-size as the pool needs them.`,
	}
	cmd.AddCommand(a.tapeExportCmd(), a.tapeRestoreCmd(), a.tapeStatusCmd(), a.tapeCatalogCmd(),
		a.tapeLabelCmd(), a.tapeEraseCmd(), a.tapeRebuildCmd())
	return cmd
}

// driveFlag adds the required --drive flag.
func driveFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "drive", "", "virtual tape drive directory (required)")
	cmd.MarkFlagRequired("drive")
}

func absDrive(dir string) (string, error) {
	if dir == "" {
		return "", usageErr("--drive: want the virtual tape drive directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usageErr("--drive %s: %v", dir, err)
	}
	return abs, nil
}

type tapeExportOpts struct {
	drive, pool, tapeSize, ns, order string
	workers                          int
	newSet, noAutoCreate, json       bool
	latestOnly                       bool
}

func (a *app) tapeExportCmd() *cobra.Command {
	var o tapeExportOpts
	cmd := &cobra.Command{
		Use:   "export --drive DIR --pool NAME [--worker-threads N] [--tape-size SIZE] [--new-set] [--latest-only] [SNAPSHOT… | GROUP… | --ns NS]",
		Short: "write snapshots and the chunks not yet on the media set to tape",
		Long: `Export writes, for each snapshot, the chunks that are not on the pool's
current media set yet, read by --worker-threads readers (1 is fastest on
a single disk; more help on RAID or ZFS), then the snapshot archive; the
catalog is committed after each snapshot, so an interrupted export loses
at most the snapshot in flight. Without SNAPSHOT arguments it exports the
namespace --ns and those below it (default: the whole store), groups
sorted and each group's snapshots oldest first. A GROUP (TYPE/ID) stands
for all its snapshots, oldest first; --latest-only exports only the
newest of each group (of the GROUP arguments, or of the namespace tree),
as PBS's tape backup job does. TYPE/ID/TIME and TYPE/ID/latest name one
snapshot. Exit code 3 means some snapshots were not exported.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			params, err := o.params(args)
			if err != nil {
				return err
			}
			st, err := a.runJob(tape.ExportKind{}.Name(), params, slog.LevelWarn, a.jobProgress("tape export"))
			if err != nil {
				return err
			}
			rep, _ := st.Result.(tape.ExportJobReport)
			if o.json {
				if err := printJSON(a, st); err != nil {
					return err
				}
			} else if !a.quiet { // -q: the exit code and errors only
				rep.WriteText(a.stdout, st)
			}
			return jobExit("tape export", st, rep.SnapshotsFailed)
		},
	}
	driveFlag(cmd, &o.drive)
	f := cmd.Flags()
	f.StringVar(&o.pool, "pool", "", "media pool (required)")
	f.IntVar(&o.workers, "worker-threads", tape.DefaultTapeWorkers, "chunk reader threads (1-32)")
	f.StringVar(&o.tapeSize, "tape-size", "64M", "capacity of the tapes the pool creates")
	f.BoolVar(&o.newSet, "new-set", false, "start a new media set instead of appending to the pool's current one")
	f.BoolVar(&o.latestOnly, "latest-only", false, "export only the newest snapshot of each group")
	f.BoolVar(&o.noAutoCreate, "no-auto-create", false, "fail when the pool has no free tape instead of creating one")
	f.StringVar(&o.ns, "ns", "", "namespace to export, with those below it (snapshot arguments are taken in it)")
	f.StringVar(&o.order, "chunk-order", jobs.OrderAuto, "chunk read order: inode (best on spinning disks), index, or auto")
	f.BoolVar(&o.json, "json", false, "print the final status as JSON")
	cmd.MarkFlagRequired("pool")
	a.lockWaitFlag(cmd)
	return cmd
}

func (o tapeExportOpts) params(args []string) (map[string]string, error) {
	dir, err := absDrive(o.drive)
	if err != nil {
		return nil, err
	}
	p := map[string]string{"drive": dir, "pool": o.pool, "worker-threads": strconv.Itoa(o.workers),
		"tape-size": o.tapeSize, "chunk-order": o.order,
		"new-set": strconv.FormatBool(o.newSet), "auto-create": strconv.FormatBool(!o.noAutoCreate)}
	if o.ns != "" {
		p["ns"] = o.ns
	}
	if o.latestOnly {
		p["latest-only"] = "true"
	}
	snaps, groups := splitGroups(args)
	if snaps, err = refArgs(o.ns, snaps, true); err != nil {
		return nil, err
	}
	for i, g := range groups {
		r, err := parseRefIn(o.ns, g)
		if err != nil {
			return nil, err
		}
		groups[i] = r.Group.String()
	}
	if err := listParam(p, "snapshots", snaps); err != nil {
		return nil, err
	}
	if err := listParam(p, "groups", groups); err != nil {
		return nil, err
	}
	return p, nil
}

// splitGroups tells group arguments (TYPE/ID, with or without a
// namespace) from snapshot ones (with a time, or /latest); the job
// checks both.
func splitGroups(args []string) (snaps, groups []string) {
	for _, a := range args {
		r, err := store.ParseRef(a)
		if err == nil && r.Latest && !strings.HasSuffix(strings.TrimRight(a, "/"), "/latest") {
			groups = append(groups, a)
		} else {
			snaps = append(snaps, a)
		}
	}
	return snaps, groups
}

// refArgs parses snapshot arguments in namespace ns (--ns) and returns
// them as full references, ns/NAME/…/TYPE/ID/TIME; latest: TYPE/ID/latest
// and TYPE/ID (a group's newest) are allowed.
func refArgs(ns string, args []string, latest bool) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, s := range args {
		if s == "" || strings.Contains(s, ",") {
			return nil, usageErr("snapshot %q: want [ns/NAME/…]TYPE/ID/TIME", s)
		}
		r, err := parseRefIn(ns, s)
		if err != nil {
			return nil, err
		}
		if r.Latest && !latest {
			return nil, usageErr("snapshot %q: name it with its time, [ns/NAME/…]TYPE/ID/TIME", s)
		}
		out = append(out, r.String())
	}
	return out, nil
}

// listParam joins snapshot arguments into a comma-separated parameter.
func listParam(p map[string]string, key string, args []string) error {
	for _, s := range args {
		if s == "" || strings.Contains(s, ",") {
			return usageErr("snapshot %q: want [ns/NAME/…]TYPE/ID/TIME", s)
		}
	}
	if len(args) > 0 {
		p[key] = strings.Join(args, ",")
	}
	return nil
}

type tapeRestoreOpts struct {
	drive, set, pool, source, ns string
	workers                      int
	json                         bool
}

func (a *app) tapeRestoreCmd() *cobra.Command {
	var o tapeRestoreOpts
	cmd := &cobra.Command{
		Use:   "restore --drive DIR [--media-set UUID | --pool NAME] [SNAPSHOT…]",
		Short: "restore snapshots from a media set into the store (--store)",
		Long: `Restore reads the snapshot archives of a media set (default: the newest
set of --pool, or of all pools), then only the tape files that hold chunks
the store (--store) lacks. Every chunk is checked (CRC, digest) before it
is inserted; a snapshot appears only when all its chunks are in the store.
Without SNAPSHOT arguments it restores every snapshot of the set. A
snapshot archive is restored only if its files match its manifest (the
snapshot it names, each file's checksum and size); when several archives
on the set claim one snapshot, the first that matches is restored and
the others are named with what became of them (refused, and why, or a
duplicate); two that match and disagree restore neither. Exit code 3
means some snapshots were not restored or some archives were refused.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := absDrive(o.drive)
			if err != nil {
				return err
			}
			p := map[string]string{"drive": dir, "worker-threads": strconv.Itoa(o.workers)}
			for k, v := range map[string]string{"media-set": o.set, "pool": o.pool, "source-store": o.source} {
				if v != "" {
					p[k] = v
				}
			}
			refs, err := refArgs(o.ns, args, false)
			if err != nil {
				return err
			}
			if err := listParam(p, "snapshots", refs); err != nil {
				return err
			}
			st, err := a.runJob(tape.RestoreKind{}.Name(), p, slog.LevelWarn, a.jobProgress("tape restore"))
			if err != nil {
				return err
			}
			rep, _ := st.Result.(tape.RestoreJobReport)
			if o.json {
				if err := printJSON(a, st); err != nil {
					return err
				}
			} else if !a.quiet { // -q: the exit code and errors only
				rep.WriteText(a.stdout, st)
			}
			return tapeRestoreExit(st, rep)
		},
	}
	driveFlag(cmd, &o.drive)
	f := cmd.Flags()
	f.StringVar(&o.set, "media-set", "", "media set UUID (see cairn tape status)")
	f.StringVar(&o.pool, "pool", "", "restore the newest media set of this pool")
	f.StringVar(&o.source, "source-store", "", "restore only snapshots exported from this datastore name")
	f.IntVar(&o.workers, "worker-threads", tape.DefaultRestoreWorkers, "chunk check-and-insert threads (1-32)")
	f.BoolVar(&o.json, "json", false, "print the final status as JSON")
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &o.ns)
	a.lockWaitFlag(cmd)
	return cmd
}

// tapeRestoreExit is jobExit for a tape restore, which also fails (exit
// 3) when it refused a snapshot archive beside another of the same
// snapshot that it restored.
func tapeRestoreExit(st jobs.Status, rep tape.RestoreJobReport) error {
	if rep.ArchivesRefused > 0 && rep.SnapshotsFailed == 0 && st.State != jobs.StateCancelled {
		return &codeError{exitPartial, fmt.Errorf("tape restore: %d snapshot archive(s) refused (named above)", rep.ArchivesRefused)}
	}
	return jobExit("tape restore", st, rep.SnapshotsFailed)
}
