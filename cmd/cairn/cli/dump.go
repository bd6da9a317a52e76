package cli

import (
	"bufio"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/tardump"
	"github.com/spf13/cobra"
)

func (a *app) dumpCmd() *cobra.Command {
	var ns, cacheSize string
	cmd := &cobra.Command{
		Use:   "dump SNAPSHOT ARCHIVE [PATH]",
		Short: "write a directory of a file archive to stdout as a tar stream, with all its metadata",
		Long: `Write directory PATH (default: the root) of file archive ARCHIVE of
SNAPSHOT to stdout as a tar stream in PAX format, e.g.

  ssh host cairn dump host/web/latest root.pxar etc | tar -x -p --xattrs --xattrs-include='*' --acls -C /tmp/etc

The same as "cairn cat SNAPSHOT ARCHIVE [PATH] --tar". Entries are named
relative to PATH ("./" is PATH itself; a PATH that is not a directory is
the stream's only entry). Every entry keeps its mode, numeric owner and
group (the archive records no names), and modification time with
nanoseconds; symlinks, devices and FIFOs are entries of their own; a hard
link is a link entry naming the first path of the file in the stream (a
copy if that path lies outside PATH); sockets are skipped with a warning.
Extended attributes and file capabilities are SCHILY.xattr.NAME records,
POSIX ACLs SCHILY.acl.access and SCHILY.acl.default records in the text
form GNU tar and star read. Payloads are read ahead as the store's
readahead says, one file at a time; memory stays bounded by the chunk cache.
A tar stream is never written to a terminal. An entry the archive holds
but a tar stream cannot (an invalid name: empty, ".", "..", holding "/"
or NUL, or too long; metadata no header can carry) or that does not
decode is left out with what lies below it, named on stderr, and the
stream ends as a complete tar; the exit code is then 3.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return a.dump(cmd, args, cacheSize) },
	}
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &ns)
	cmd.Flags().StringVar(&cacheSize, "cache-size", "64M", "chunk cache size (at least 128M on a remote store unless given)")
	return cmd
}

// dump writes PATH (args[2], default the root) of file archive args[1]
// of snapshot args[0] to stdout as a tar stream: "cairn dump" and "cairn
// cat --tar". It takes the command's --ns and --cache-size.
func (a *app) dump(cmd *cobra.Command, args []string, cacheFlag string) error {
	if progress.IsTerminal(a.stdout) {
		return usageErr("refusing to write a tar stream to a terminal: redirect stdout to a file or a pipe (| tar -x -C DIR)")
	}
	path := ""
	if len(args) == 3 {
		path = args[2]
	}
	cs, err := parseSize(cacheFlag)
	if err != nil {
		return usageErr("--cache-size: %v", err)
	}
	ref, err := parseRefIn(flagString(cmd, "ns"), args[0])
	if err != nil {
		return err
	}
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	if !cmd.Flags().Changed("cache-size") { // room for the store's readahead
		cs = max(cs, 2*int64(s.Readahead())*chunk.DefaultChunkSize)
	}
	snap, m, err := resolveRef(s, ref)
	if err != nil {
		return err
	}
	c, err := store.NewCache(s, cs)
	if err != nil {
		return err
	}
	defer c.Close()
	acc, closeArchive, err := filearchive.OpenName(a.ctx, s, snap, m, args[1], c)
	if err != nil {
		return err
	}
	defer closeArchive()
	where := fmt.Sprintf("snapshot %s archive %s", snap, args[1])
	start, err := acc.LookupPath(a.ctx, path)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	var written atomic.Int64
	prog := a.startProgress("dump "+args[1], 0, func() (int64, string) { return written.Load(), "" })
	defer prog.Stop()
	bw := bufio.NewWriterSize(countWriter{a.stdout, &written}, 256<<10)
	d := a.newTarDump(acc, path, where)
	err = d.Write(a.ctx, bw, start)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if d.Skipped() > 0 {
		return &codeError{exitPartial, fmt.Errorf("%s: %d entries skipped (named above); the tar stream is complete without them", where, d.Skipped())}
	}
	return nil
}

// newTarDump is the dump of path of acc, whose warnings (unless -q) and
// skipped entries are printed on stderr after where.
func (a *app) newTarDump(acc *pxar.Accessor, path, where string) *tardump.Dump {
	d := tardump.New(acc, path)
	d.Warn = func(msg string) {
		if !a.quiet {
			fmt.Fprintf(a.stderr, "cairn: %s: %s\n", where, msg)
		}
	}
	d.Skip = func(name string, err error) {
		if name != "" {
			name = quoteName(name) + ": "
		}
		fmt.Fprintf(a.stderr, "cairn: %s: %sskipped: %s\n", where, name, escapeText(err.Error()))
	}
	return d
}

// resolveRef finds a parsed snapshot reference and reads its manifest.
func resolveRef(s *store.Store, r store.Ref) (store.Snapshot, *store.Manifest, error) {
	snap, err := s.Resolve(r)
	if err != nil {
		return snap, nil, err
	}
	m, err := s.ReadManifest(snap)
	return snap, m, err
}

// flagString is the value of the command's flag name, or "" if it has
// none (cat has --ns once the browsing commands take it).
func flagString(cmd *cobra.Command, name string) string {
	if f := cmd.Flags().Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}
