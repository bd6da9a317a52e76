package cli

import (
	"fmt"
	"io"

	"github.com/cairnfs/cairn/chunk"
	cfs "github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/spf13/cobra"
)

func (a *app) catCmd() *cobra.Command {
	var cacheSize string
	var readahead int
	var asTar bool
	var ns string
	cmd := &cobra.Command{
		Use:   "cat SNAPSHOT ARCHIVE [PATH]",
		Short: "stream an archive's data to stdout (an image, a blob's content, or a file of a file archive)",
		Long: `Streams an image, a blob's decoded content, or, with PATH, one regular
file of a file archive to standard output, without a mount. An image is
read in order with --readahead chunks loaded ahead; every chunk is
checked before its bytes are written. With --tar, a directory of a file
archive is written as a tar stream, as cairn dump does.`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := qualifyRef(ns, args[0])
			if err != nil {
				return err
			}
			args[0] = ref // from here on, the snapshot names its namespace
			if asTar {    // the same as cairn dump (dump.go)
				return a.dump(cmd, args, cacheSize)
			}
			cs, err := parseSize(cacheSize)
			if err != nil {
				return usageErr("--cache-size: %v", err)
			}
			if readahead, err = checkReadahead(readahead, cmd.Flags().Changed("readahead"), cs, cacheSize); err != nil {
				return err
			}
			if len(args) == 3 {
				return a.catFile(args[0], args[1], args[2], cs)
			}
			s, err := a.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			snap, m, ar, err := a.resolveArchive(s, args[0], args[1])
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("readahead") {
				if !cmd.Flags().Changed("cache-size") { // room for the store's readahead
					cs = max(cs, 2*int64(s.Readahead())*chunk.DefaultChunkSize)
				}
				readahead = min(s.Readahead(), cfs.MaxReadahead(cs))
			}
			return a.catArchive(s, snap, m, ar, cs, readahead)
		},
	}
	a.keyfileFlags(cmd, false)
	nsFlag(cmd, &ns)
	cmd.Flags().StringVar(&cacheSize, "cache-size", "64M", "chunk cache size (at least 128M on a remote store unless given)")
	cmd.Flags().BoolVar(&asTar, "tar", false, "write PATH (default: the root) of a file archive as a tar stream, as cairn dump does")
	cmd.Flags().IntVar(&readahead, "readahead", 4, "chunks loaded ahead in parallel (default: 4, 16 on a remote store; at most as many 4 MiB chunks as fill half of --cache-size)")
	return cmd
}

func (a *app) resolveSnapshot(s *store.Store, ref string) (store.Snapshot, *store.Manifest, error) {
	r, err := store.ParseRef(ref)
	if err != nil {
		return store.Snapshot{}, nil, usageErr("%v", err)
	}
	snap, err := s.Resolve(r)
	if err != nil {
		return snap, nil, err
	}
	m, err := s.ReadManifest(snap)
	return snap, m, err
}

// resolveArchive resolves a snapshot reference and finds archive name
// (as the user names it) in its manifest.
func (a *app) resolveArchive(s *store.Store, ref, name string) (store.Snapshot, *store.Manifest, store.Archive, error) {
	snap, m, err := a.resolveSnapshot(s, ref)
	if err != nil {
		return snap, nil, store.Archive{}, err
	}
	ar, err := store.FindArchive(m, name)
	if err != nil {
		return snap, m, ar, fmt.Errorf("snapshot %s: %w", snap, err)
	}
	return snap, m, ar, nil
}

func (a *app) catArchive(s *store.Store, snap store.Snapshot, m *store.Manifest, ar store.Archive, cacheSize int64, readahead int) error {
	switch ar.Kind {
	case store.ArchiveBlob:
		data, err := s.ReadBlob(snap, m, ar.Files[0])
		if err != nil {
			return err
		}
		_, err = a.stdout.Write(data)
		return err
	case store.ArchiveImage, store.ArchiveOther:
	default:
		return usageErr("archive %s is a file archive: name a path inside it (cairn cat SNAPSHOT %s PATH)", ar.Name, ar.Name)
	}
	x, err := s.OpenSnapshotIndex(snap, m, ar.Files[0])
	if err != nil {
		return err
	}
	defer x.Close()
	c, err := store.NewCache(s, cacheSize)
	if err != nil {
		return err
	}
	defer c.Close()
	r := chunkcache.NewReader(a.ctx, x, c, readahead)
	if _, err := r.WriteTo(a.stdout); err != nil {
		return fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, err)
	}
	return nil
}

// catFile writes the content of regular file path of file archive name.
func (a *app) catFile(ref, name, path string, cacheSize int64) error {
	return a.withFileArchive(ref, name, cacheSize, func(acc *pxar.Accessor, where string) error {
		e, err := acc.LookupPath(a.ctx, path)
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		r, err := acc.Open(a.ctx, e)
		if err != nil {
			return fmt.Errorf("%s: %s: %w", where, quoteName(path), err)
		}
		buf := make([]byte, 1<<20)
		w := struct{ io.Writer }{a.stdout} // no ReaderFrom: copy in 1 MiB reads
		if _, err := io.CopyBuffer(w, io.NewSectionReader(r, 0, r.Size()), buf); err != nil {
			return fmt.Errorf("%s: %s: %w", where, quoteName(path), err)
		}
		return nil
	})
}
