package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/browse"
	"github.com/spf13/cobra"
)

type lsOptions struct {
	cacheSize                      string
	ns                             string
	dirItself, recursive, long, js bool
}

func (a *app) lsCmd() *cobra.Command {
	var o lsOptions
	cmd := &cobra.Command{
		Use:   "ls SNAPSHOT [ARCHIVE [PATH]]",
		Short: "list a snapshot's archives, or a directory of a file archive, without a mount",
		Long: `With SNAPSHOT alone, list its archives: name, kind (image, file archive,
blob), size and how it is stored.

With ARCHIVE (a file archive, e.g. root.pxar), list the entries of
directory PATH (default: the root) sorted by name, like ls -ln: mode,
owner and group IDs, size, modification time (UTC), name and a symlink's
target; -l shows this host's user and group names instead of the IDs
(the number where it has none). A PATH that is not a directory (or -d)
shows that entry alone. -R lists the whole subtree, one line an entry,
each path relative to PATH. Only the archive's metadata is read.
Names are printed escaped ("a\nb") when they hold control characters.`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := qualifyRef(o.ns, args[0])
			if err != nil {
				return err
			}
			if len(args) == 1 {
				if o.recursive || o.dirItself {
					return usageErr("ls: -R and -d need an ARCHIVE")
				}
				return a.lsArchives(ref, o.js)
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
				return a.lsTree(acc, snap, ar, path, o)
			})
		},
	}
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &o.ns)
	cmd.Flags().StringVar(&o.cacheSize, "cache-size", "64M", "chunk cache size")
	cmd.Flags().BoolVarP(&o.dirItself, "directory", "d", false, "show a directory itself, not its entries")
	cmd.Flags().BoolVarP(&o.recursive, "recursive", "R", false, "list the whole subtree")
	cmd.Flags().BoolVarP(&o.long, "long", "l", false, "user and group names instead of IDs")
	cmd.Flags().BoolVar(&o.js, "json", false, "print one JSON document (see docs/json.md)")
	return cmd
}

// lsTree lists path of file archive acc.
func (a *app) lsTree(acc *pxar.Accessor, snap store.Snapshot, ar store.Archive, path string, o lsOptions) error {
	where := fmt.Sprintf("snapshot %s archive %s", snap, ar.Name)
	start, err := acc.LookupPath(a.ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var ow *browse.Owners
	if o.long || o.js {
		ow = browse.NewOwners()
	}
	out := newEntryOutput(a, ow, o.js, snap, ar, path)
	if err := out.start(); err != nil {
		return err
	}
	whole := start.IsDir() && !o.dirItself
	w := &browse.Walk{Acc: acc, Fail: out.fail,
		Visit: func(p string, e *pxar.Entry, depth int) (bool, error) {
			if depth == 0 {
				if !whole {
					return false, out.entry(e, displayPath(path))
				}
				return true, nil
			}
			return o.recursive, out.entry(e, p)
		}}
	err = w.Run(a.ctx, start, "")
	if err = out.finish(err); err != nil {
		return err
	}
	if out.failed > 0 {
		err := fmt.Errorf("%s: %d directories could not be listed", where, out.failed)
		if !o.recursive {
			return err
		}
		return &codeError{exitPartial, err}
	}
	return nil
}

// displayPath is how ls names the entry it was asked for.
func displayPath(path string) string {
	if strings.Trim(path, "/") == "" {
		return "/"
	}
	return path
}

// withArchiveMeta opens file archive name of snapshot ref for listing
// (its metadata stream only: filearchive.OpenMetadata) and calls fn.
func (a *app) withArchiveMeta(ref, name string, cacheSize int64, fn func(*pxar.Accessor, store.Snapshot, store.Archive) error) error {
	return a.openFileArchive(ref, name, cacheSize, filearchive.OpenMetadata, fn)
}

// withFileArchive opens file archive name of snapshot ref and calls fn
// with it and a description for messages ("snapshot S archive A").
func (a *app) withFileArchive(ref, name string, cacheSize int64, fn func(*pxar.Accessor, string) error) error {
	return a.openFileArchive(ref, name, cacheSize, filearchive.Open, func(acc *pxar.Accessor, snap store.Snapshot, ar store.Archive) error {
		return fn(acc, fmt.Sprintf("snapshot %s archive %s", snap, ar.Name))
	})
}

type archiveOpener func(context.Context, *store.Store, store.Snapshot, *store.Manifest, store.Archive, *chunkcache.Cache) (*pxar.Accessor, func() error, error)

func (a *app) openFileArchive(ref, name string, cacheSize int64, open archiveOpener, fn func(*pxar.Accessor, store.Snapshot, store.Archive) error) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	snap, m, ar, err := a.resolveArchive(s, ref, name)
	if err != nil {
		return err
	}
	c, err := store.NewCache(s, cacheSize)
	if err != nil {
		return err
	}
	defer c.Close()
	acc, closeArchive, err := open(a.ctx, s, snap, m, ar, c)
	if err != nil {
		return err
	}
	defer closeArchive()
	return fn(acc, snap, ar)
}

// entryOutput prints entries as text lines or one streamed JSON document.
type entryOutput struct {
	a      *app
	bw     *bufio.Writer
	ow     *browse.Owners
	js     *browse.JSONListing
	json   bool
	head   [3]string
	print  func(e *pxar.Entry, path string) error // text form; default writeLong
	failed int
}

func newEntryOutput(a *app, ow *browse.Owners, json bool, snap store.Snapshot, ar store.Archive, path string) *entryOutput {
	return &entryOutput{a: a, bw: bufio.NewWriter(a.stdout), ow: ow, json: json, head: [3]string{snap.String(), ar.Name, path}}
}

func (o *entryOutput) start() error {
	if !o.json {
		return nil
	}
	var err error
	o.js, err = browse.StartJSONListing(o.bw, o.head[0], o.head[1], o.head[2])
	return err
}

func (o *entryOutput) entry(e *pxar.Entry, path string) error {
	switch {
	case o.json:
		return o.js.Entry(o.ow.EntryJSON(e, path))
	case o.print != nil:
		return o.print(e, path)
	}
	browse.WriteLong(o.bw, o.ow, e, path)
	return nil
}

func (o *entryOutput) fail(path string, err error) {
	o.failed++
	if o.json {
		o.js.Fail(path, err)
	}
	if path == "" {
		path = "/"
	}
	msg := err.Error()
	if len(msg) > 4096 { // pxar's errors name the directory's path too
		msg = browse.ShortPath(msg)
	}
	fmt.Fprintf(o.a.stderr, "cairn: %s: %s: %s\n", o.head[1], quoteName(browse.ShortPath(path)), msg)
}

// finish ends the output after a walk that returned err; a write error
// is returned if there was none before.
func (o *entryOutput) finish(err error) error {
	if o.json && err == nil {
		err = o.js.Finish()
	}
	if ferr := o.bw.Flush(); err == nil {
		err = ferr
	}
	return err
}
