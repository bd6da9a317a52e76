package cli

import (
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/snapdiff"
	"github.com/spf13/cobra"
)

type diffOpts struct {
	ns, cacheSize string
	content, json bool
}

func (a *app) diffCmd() *cobra.Command {
	var o diffOpts
	cmd := &cobra.Command{
		Use:   "diff SNAPSHOT1 SNAPSHOT2 [ARCHIVE]",
		Short: "show what changed between two snapshots: added, removed and changed paths and archives",
		Long: `Compare SNAPSHOT1 (the old one) with SNAPSHOT2, every archive of either or
just ARCHIVE, like restic diff. Each line is one change:

  + root.pxar/etc/new.conf         added
  - root.pxar/tmp/old/             removed (directories end in /)
  M root.pxar/etc/hosts (mtime, content)   changed, with the reasons
  M disk.img: 3 of 256 chunks differ (12 MiB of 1.0 GiB)
  + extra.img (archive only in SNAPSHOT2)

then a summary line (not with -q). Archives whose index files are
identical are unchanged without being read. File archives are walked in
step, in name order, from their metadata (an archive whose directories are
not stored in name order, as cairn and PBS write them, is refused); the
reasons are type, size,
mtime, mode, owner, flags, target (of a symlink), device, link (a hard
link's target), xattrs (file capabilities included), acl, and with
--content also content: then the payloads of two files of the same size
are read and their SHA-256 compared, which catches a change that kept
size and mtime. Without --content no payload is read. Image and other
index archives are compared by their chunk digests (no data is read):
position by position for images, by chunk set otherwise; blobs by their
checksum.

The exit code is 0 whether or not the snapshots differ (1 on failure, 2
on bad usage): scripts read the summary or --json (added, removed,
changed). --json prints one document, described in docs/json.md.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return a.diff(o, args) },
	}
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &o.ns)
	cmd.Flags().BoolVar(&o.content, "content", false, "also compare the content (SHA-256) of files of equal size: reads their payloads")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the changes and summary as JSON (docs/json.md)")
	cmd.Flags().StringVar(&o.cacheSize, "cache-size", "64M", "chunk cache size")
	return cmd
}

func (a *app) diff(o diffOpts, args []string) error {
	cs, err := parseSize(o.cacheSize)
	if err != nil {
		return usageErr("--cache-size: %v", err)
	}
	r1, err := parseRefIn(o.ns, args[0])
	if err != nil {
		return err
	}
	r2, err := parseRefIn(o.ns, args[1])
	if err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	snap1, m1, err := resolveRef(s, r1)
	if err != nil {
		return err
	}
	snap2, m2, err := resolveRef(s, r2)
	if err != nil {
		return err
	}
	warnKeysDiffer(a, snap1, m1, snap2, m2)
	names, err := snapdiff.ArchiveNames(m1, m2, args[2:])
	if err != nil {
		return usageErr("snapshots %s and %s: %v", snap1, snap2, err)
	}
	c, err := store.NewCache(s, cs)
	if err != nil {
		return err
	}
	defer c.Close()
	out := snapdiff.NewWriter(a.stdout, o.json, a.quiet, snapdiff.Report{From: snap1.String(), To: snap2.String(), Content: o.content})
	d := &snapdiff.Differ{Store: s, Cache: c, Out: out, Content: o.content,
		Snapshot: [2]store.Snapshot{snap1, snap2}, Manifest: [2]*store.Manifest{m1, m2}}
	for _, name := range names {
		if err := d.Compare(a.ctx, name); err != nil {
			out.Abort()
			return err
		}
	}
	return out.Finish()
}
