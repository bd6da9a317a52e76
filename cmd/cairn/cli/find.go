package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/browse"
	"github.com/spf13/cobra"
)

type findOptions struct {
	ns, cacheSize                string
	name, path, types, newer, sz string
	js, print0                   bool
}

func (a *app) findCmd() *cobra.Command {
	var o findOptions
	cmd := &cobra.Command{
		Use:   "find SNAPSHOT ARCHIVE [PATH] [--name GLOB] [--path GLOB] [--type f|d|l|b|c|p|s] [--newer TIME|AGE] [--size [+|-]SIZE]",
		Short: "search a file archive's metadata, like find(1), without a mount",
		Long: `Walk directory PATH (default: the root) of file archive ARCHIVE and print
the path of every entry that passes all the tests given, like find(1).
Paths are printed from the archive's root ("/etc/passwd"), escaped when
they hold control characters; -0 prints them raw, each ended by a NUL.
Only the archive's metadata is read: of a split archive, never the
payload stream (file contents).

  --name GLOB    the entry's name matches GLOB (*, ?, [a-z], [!a-z], \)
  --path GLOB    its whole path matches GLOB; * also matches /
  --type T       f file, d directory, l symlink, b and c devices, p FIFO,
                 s socket; several separated by commas (f,l)
  --newer WHEN   modified after WHEN: a time (2024-05-01, "2024-05-01
                 12:00" in UTC, or RFC 3339) or an age before now (7d,
                 36h, 90m)
  --size N       a regular file of exactly N bytes, +N more, -N fewer
                 (suffixes k, M, G: 1024-based); other entries count as 0`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := qualifyRef(o.ns, args[0])
			if err != nil {
				return err
			}
			test, err := o.test(time.Now())
			if err != nil {
				return err
			}
			if o.js && o.print0 {
				return usageErr("find: --json and --print0 exclude each other")
			}
			cs, err := parseSize(o.cacheSize)
			if err != nil {
				return usageErr("--cache-size: %v", err)
			}
			path := ""
			if len(args) == 3 {
				path = args[2]
			}
			return a.withArchiveMeta(ref, args[1], cs, func(acc *pxar.Accessor, snap store.Snapshot, ar store.Archive) error {
				return a.find(acc, snap, ar, path, test, o)
			})
		},
	}
	f := cmd.Flags()
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &o.ns)
	f.StringVar(&o.cacheSize, "cache-size", "64M", "chunk cache size")
	f.StringVar(&o.name, "name", "", "entry name matches this glob")
	f.StringVar(&o.path, "path", "", "whole path (from the archive's root) matches this glob")
	f.StringVar(&o.types, "type", "", "entry type: f, d, l, b, c, p, s (several: f,l)")
	f.StringVar(&o.newer, "newer", "", "modified after this time (2024-05-01, \"2024-05-01 12:00\" UTC, RFC 3339) or age (7d, 36h)")
	f.StringVar(&o.sz, "size", "", "file size: N exactly, +N more than, -N less than (k, M, G suffixes)")
	f.BoolVar(&o.js, "json", false, "print one JSON document (see docs/json.md)")
	f.BoolVarP(&o.print0, "print0", "0", false, "print raw paths, each ended by a NUL")
	return cmd
}

// test checks the options and builds the tests; a bad value is a usage
// error naming the flag.
func (o *findOptions) test(now time.Time) (*browse.Test, error) {
	t := &browse.Test{}
	var err error
	if o.name != "" {
		if t.Name, err = browse.Glob(o.name); err != nil {
			return nil, usageErr("--name %q: %v", o.name, err)
		}
	}
	if o.path != "" {
		if t.Path, err = browse.Glob(o.path); err != nil {
			return nil, usageErr("--path %q: %v", o.path, err)
		}
	}
	if o.types != "" {
		if t.Types, err = browse.ParseTypes(o.types); err != nil {
			return nil, usageErr("--type %v", err)
		}
	}
	if o.newer != "" {
		at, err := browse.ParseNewer(o.newer, now)
		if err != nil {
			return nil, usageErr("--newer %v", err)
		}
		t.Newer = &at
	}
	if o.sz != "" {
		cmp, n, err := parseSizeTest(o.sz)
		if err != nil {
			return nil, usageErr("--size %q: %v", o.sz, err)
		}
		t.SizeCmp, t.Size = cmp, &n
	}
	return t, nil
}

// find walks path of acc and prints the entries that pass test.
func (a *app) find(acc *pxar.Accessor, snap store.Snapshot, ar store.Archive, path string, test *browse.Test, o findOptions) error {
	where := fmt.Sprintf("snapshot %s archive %s", snap, ar.Name)
	start, err := acc.LookupPath(a.ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var ow *browse.Owners
	if o.js {
		ow = browse.NewOwners()
	}
	out := newEntryOutput(a, ow, o.js, snap, ar, path)
	out.print = func(e *pxar.Entry, p string) error {
		if o.print0 {
			_, err := fmt.Fprintf(out.bw, "%s\x00", p)
			return err
		}
		_, err := fmt.Fprintln(out.bw, quoteName(p))
		return err
	}
	if err := out.start(); err != nil {
		return err
	}
	w := &browse.Walk{Acc: acc, Fail: out.fail,
		Visit: func(p string, e *pxar.Entry, _ int) (bool, error) {
			if test.Match(e, p) {
				return true, out.entry(e, p)
			}
			return true, nil
		}}
	err = w.Run(a.ctx, start, "/"+strings.Trim(path, "/"))
	if err = out.finish(err); err != nil {
		return err
	}
	if out.failed > 0 {
		return &codeError{exitPartial, fmt.Errorf("%s: %d directories could not be searched", where, out.failed)}
	}
	return nil
}

// parseSizeTest parses --size: [+|-]SIZE, larger than, smaller than or
// exactly SIZE bytes (suffixes k, M, G as --cache-size).
func parseSizeTest(s string) (int, uint64, error) {
	cmp := 0
	switch {
	case strings.HasPrefix(s, "+"):
		cmp, s = 1, s[1:]
	case strings.HasPrefix(s, "-"):
		cmp, s = -1, s[1:]
	}
	n, err := parseSize(s)
	if err != nil {
		return 0, 0, err
	}
	if n < 0 {
		return 0, 0, fmt.Errorf("%q: negative size", s)
	}
	return cmp, uint64(n), nil
}
