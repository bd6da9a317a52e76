package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/spf13/cobra"
)

func (a *app) lsCmd() *cobra.Command {
	var cacheSize string
	var dirItself bool
	cmd := &cobra.Command{
		Use:   "ls SNAPSHOT ARCHIVE [PATH]",
		Short: "list a directory of a file archive (or show one entry), without a mount",
		Long: `List the entries of directory PATH (default: the root) of file archive
ARCHIVE (e.g. root.pxar) of SNAPSHOT, sorted by name, like ls -l: mode,
owner, group, size, modification time (UTC), name and a symlink's target.
A PATH that is not a directory (or -d) shows that entry alone.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := parseSize(cacheSize)
			if err != nil {
				return usageErr("--cache-size: %v", err)
			}
			path := ""
			if len(args) == 3 {
				path = args[2]
			}
			return a.withFileArchive(args[0], args[1], cs, func(acc *pxar.Accessor, where string) error {
				e, err := acc.LookupPath(a.ctx, path)
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				w := bufio.NewWriter(a.stdout)
				if e.Kind == pxar.KindDir && !dirItself {
					err = listDir(a.ctx, w, acc, e)
				} else {
					name := e.Name
					if path != "" {
						name = path
					}
					writeEntry(w, e, name)
				}
				if ferr := w.Flush(); err == nil {
					err = ferr
				}
				if err != nil {
					return fmt.Errorf("%s: %w", where, err)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&cacheSize, "cache-size", "64M", "chunk cache size")
	cmd.Flags().BoolVarP(&dirItself, "directory", "d", false, "show a directory itself, not its entries")
	return cmd
}

// withFileArchive opens file archive name of snapshot ref and calls fn
// with it and a description for messages ("snapshot S archive A").
func (a *app) withFileArchive(ref, name string, cacheSize int64, fn func(*pxar.Accessor, string) error) error {
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
	acc, closeArchive, err := filearchive.Open(a.ctx, s, snap, m, ar, c)
	if err != nil {
		return err
	}
	defer closeArchive()
	return fn(acc, fmt.Sprintf("snapshot %s archive %s", snap, ar.Name))
}

// listDir writes dir's entries in name order, streaming.
func listDir(ctx context.Context, w io.Writer, acc *pxar.Accessor, dir *pxar.Entry) error {
	r, err := acc.ReadDirSorted(ctx, dir)
	if err != nil {
		return err
	}
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		writeEntry(w, e, e.Name)
	}
}

// writeEntry writes one ls -l style line.
func writeEntry(w io.Writer, e *pxar.Entry, name string) {
	st := e.Metadata.Stat
	size := fmt.Sprint(e.Size)
	switch e.Kind {
	case pxar.KindDevice:
		size = fmt.Sprintf("%d, %d", e.Device.Major, e.Device.Minor)
	case pxar.KindFile:
	default:
		size = "0"
	}
	mtime := time.Unix(st.Mtime.Secs, int64(st.Mtime.Nanos)).UTC().Format("2006-01-02 15:04:05")
	fmt.Fprintf(w, "%s %5d %5d %12s %s %s", modeString(st.Mode), st.UID, st.GID, size, mtime, quoteName(name))
	if e.Kind == pxar.KindSymlink {
		fmt.Fprintf(w, " -> %s", quoteName(e.Target))
	}
	fmt.Fprintln(w)
}

// modeString renders a mode as ls does: type, then rwx for owner, group
// and others with setuid, setgid and sticky bits.
func modeString(mode uint64) string {
	b := []byte("?rwxrwxrwx")
	switch mode & pxar.ModeIFMT {
	case pxar.ModeIFREG:
		b[0] = '-'
	case pxar.ModeIFDIR:
		b[0] = 'd'
	case pxar.ModeIFLNK:
		b[0] = 'l'
	case pxar.ModeIFCHR:
		b[0] = 'c'
	case pxar.ModeIFBLK:
		b[0] = 'b'
	case pxar.ModeIFIFO:
		b[0] = 'p'
	case pxar.ModeIFSOCK:
		b[0] = 's'
	}
	for i := 0; i < 9; i++ {
		if mode&(1<<(8-i)) == 0 {
			b[1+i] = '-'
		}
	}
	special := func(bit uint64, at int, set, unsetX byte) {
		if mode&bit == 0 {
			return
		}
		if b[at] == 'x' {
			b[at] = set
		} else {
			b[at] = unsetX
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(b)
}
