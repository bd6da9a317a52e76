package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

// diffReport is what diff --json prints: one document, written as the
// walks go (changes first), so memory does not grow with the changes.
type diffReport struct {
	Changes  []diffChange  `json:"changes"`
	From     string        `json:"from"`
	To       string        `json:"to"`
	Content  bool          `json:"content"`
	Archives []diffArchive `json:"archives"`
	Added    int64         `json:"added"`
	Removed  int64         `json:"removed"`
	Changed  int64         `json:"changed"`
}

// diffChange is one added, removed or changed path of a file archive.
type diffChange struct {
	Archive string   `json:"archive"`
	Path    string   `json:"path"`
	Change  string   `json:"change"`
	Type    string   `json:"type"`
	Reasons []string `json:"reasons,omitempty"`
}

// diffArchive is one archive of either snapshot.
type diffArchive struct {
	Archive      string `json:"archive"`
	Kind         string `json:"kind"`
	Status       string `json:"status"`
	Added        int64  `json:"added"`
	Removed      int64  `json:"removed"`
	Changed      int64  `json:"changed"`
	FromSize     uint64 `json:"from_size"`
	ToSize       uint64 `json:"to_size"`
	Chunks       int    `json:"chunks"`
	ChunksDiffer int    `json:"chunks_differ"`
	BytesDiffer  int64  `json:"bytes_differ"`
}

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
	names, err := diffArchiveNames(m1, m2, args[2:])
	if err != nil {
		return usageErr("snapshots %s and %s: %v", snap1, snap2, err)
	}
	c, err := store.NewCache(s, cs)
	if err != nil {
		return err
	}
	defer c.Close()
	out := newDiffOutput(a, o.json, diffReport{From: snap1.String(), To: snap2.String(), Content: o.content})
	d := &snapDiff{a: a, s: s, c: c, out: out, content: o.content,
		snap: [2]store.Snapshot{snap1, snap2}, m: [2]*store.Manifest{m1, m2}}
	for _, name := range names {
		if err := d.archive(name); err != nil {
			out.abort()
			return err
		}
	}
	return out.finish()
}

// diffArchiveNames lists the archives to compare: only (if given, from
// either snapshot), else every archive of either, sorted by name.
func diffArchiveNames(m1, m2 *store.Manifest, only []string) ([]string, error) {
	var names []string
	for _, m := range []*store.Manifest{m1, m2} {
		for _, ar := range store.Archives(m) {
			if !slices.Contains(names, ar.Name) {
				names = append(names, ar.Name)
			}
		}
	}
	slices.Sort(names)
	if len(only) == 0 {
		return names, nil
	}
	ar1, err1 := store.FindArchive(m1, only[0])
	ar2, err2 := store.FindArchive(m2, only[0])
	switch {
	case err1 == nil:
		return []string{ar1.Name}, nil
	case err2 == nil:
		return []string{ar2.Name}, nil
	}
	return nil, fmt.Errorf("archive %q is in neither (they have: %s)", only[0], strings.Join(names, ", "))
}

// snapDiff compares the archives of two snapshots of one store.
type snapDiff struct {
	a       *app
	s       *store.Store
	c       *store.Cache
	out     *diffOutput
	content bool
	snap    [2]store.Snapshot
	m       [2]*store.Manifest
}

// archive compares archive name of both snapshots.
func (d *snapDiff) archive(name string) error {
	var ars [2]*store.Archive
	for i, m := range d.m {
		if ar, err := store.FindArchive(m, name); err == nil {
			ars[i] = &ar
		}
	}
	rep := diffArchive{Archive: name}
	for i, ar := range ars {
		if ar == nil {
			continue
		}
		rep.Kind = archiveKindName(ar.Kind)
		size := ar.Size
		if fi, ok := d.m[i].File(ar.Files[len(ar.Files)-1]); ok && ar.Kind == store.ArchiveSplitPxar {
			size = fi.Size // the payload stream's
		}
		if i == 0 {
			rep.FromSize = size
		} else {
			rep.ToSize = size
		}
	}
	switch {
	case ars[0] == nil:
		rep.Status = "added"
	case ars[1] == nil:
		rep.Status = "removed"
	case d.sameFiles(*ars[0], *ars[1]):
		rep.Status = "unchanged"
	case archiveKindName(ars[0].Kind) != archiveKindName(ars[1].Kind):
		return fmt.Errorf("archive %s is a %s archive in %s and a %s archive in %s", name,
			archiveKindName(ars[0].Kind), d.snap[0], archiveKindName(ars[1].Kind), d.snap[1])
	default:
		rep.Status = "changed"
		if err := d.changed(&rep, *ars[0], *ars[1]); err != nil {
			return err
		}
		if rep.Kind == "file_archive" && rep.Added+rep.Removed+rep.Changed == 0 {
			rep.Status = "unchanged"
		}
	}
	return d.out.archive(rep)
}

// sameFiles reports whether both archives have the same index files
// (by the manifests' checksums): then their contents are the same.
func (d *snapDiff) sameFiles(x, y store.Archive) bool {
	if x.Kind != y.Kind || len(x.Files) != len(y.Files) {
		return false
	}
	for i := range x.Files {
		f1, ok1 := d.m[0].File(x.Files[i])
		f2, ok2 := d.m[1].File(y.Files[i])
		if !ok1 || !ok2 || f1.Csum != f2.Csum || f1.Size != f2.Size {
			return false
		}
	}
	return true
}

// changed compares two archives whose files differ.
func (d *snapDiff) changed(rep *diffArchive, x, y store.Archive) error {
	switch rep.Kind {
	case "blob":
		return nil
	case "file_archive":
		return d.files(rep, x, y)
	}
	return d.indexes(rep, x, y)
}

// files walks two file archives in step.
func (d *snapDiff) files(rep *diffArchive, x, y store.Archive) error {
	from, close1, err := filearchive.Open(d.a.ctx, d.s, d.snap[0], d.m[0], x, d.c)
	if err != nil {
		return err
	}
	defer close1()
	to, close2, err := filearchive.Open(d.a.ctx, d.s, d.snap[1], d.m[1], y, d.c)
	if err != nil {
		return err
	}
	defer close2()
	t := &treeDiff{ctx: d.a.ctx, from: from, to: to, content: d.content, emit: func(c diffChange) error {
		switch c.Change {
		case "added":
			rep.Added++
		case "removed":
			rep.Removed++
		default:
			rep.Changed++
		}
		c.Archive = rep.Archive
		return d.out.change(c)
	}}
	if err := t.run(); err != nil {
		return fmt.Errorf("archive %s of %s and %s: %w", x.Name, d.snap[0], d.snap[1], err)
	}
	return nil
}

// indexes compares the chunk digests of two image (or other) archives.
func (d *snapDiff) indexes(rep *diffArchive, x, y store.Archive) error {
	ix, err := d.s.OpenSnapshotIndex(d.snap[0], d.m[0], x.Files[0])
	if err != nil {
		return err
	}
	defer ix.Close()
	iy, err := d.s.OpenSnapshotIndex(d.snap[1], d.m[1], y.Files[0])
	if err != nil {
		return err
	}
	defer iy.Close()
	rep.Chunks = iy.Len()
	rep.ChunksDiffer, rep.BytesDiffer, err = compareIndexes(ix, iy, x.Kind == store.ArchiveImage && y.Kind == store.ArchiveImage)
	return err
}

// diffText is the text line of an archive that is not unchanged.
func diffText(r diffArchive, from, to string) string {
	switch r.Status {
	case "added":
		return fmt.Sprintf("+ %s (archive only in %s)", quoteName(r.Archive), to)
	case "removed":
		return fmt.Sprintf("- %s (archive only in %s)", quoteName(r.Archive), from)
	}
	switch r.Kind {
	case "image", "other":
		s := fmt.Sprintf("M %s: %d of %d chunks differ (%s of %s)", quoteName(r.Archive), r.ChunksDiffer, r.Chunks,
			humanize.IBytes(uint64(r.BytesDiffer)), humanize.IBytes(r.ToSize))
		if r.FromSize != r.ToSize {
			s += fmt.Sprintf(", size %s -> %s", humanize.IBytes(r.FromSize), humanize.IBytes(r.ToSize))
		}
		return s
	case "blob":
		return fmt.Sprintf("M %s (content)", quoteName(r.Archive))
	}
	return ""
}
