package main

import (
	"fmt"

	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

func (a *app) catCmd() *cobra.Command {
	var cacheSize string
	var readahead int
	cmd := &cobra.Command{
		Use:   "cat SNAPSHOT ARCHIVE",
		Short: "stream an archive's data to stdout (an image, or a blob's content)",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			cs, err := parseSize(cacheSize)
			if err != nil {
				return usageErr("--cache-size: %v", err)
			}
			s, err := a.openStore()
			if err != nil {
				return err
			}
			defer s.Close()
			snap, m, err := a.resolveSnapshot(s, args[0])
			if err != nil {
				return err
			}
			ar, err := store.FindArchive(m, args[1])
			if err != nil {
				return fmt.Errorf("snapshot %s: %w", snap, err)
			}
			return a.catArchive(s, snap, m, ar, cs, readahead)
		},
	}
	cmd.Flags().StringVar(&cacheSize, "cache-size", "64M", "chunk cache size")
	cmd.Flags().IntVar(&readahead, "readahead", 4, "chunks loaded ahead in parallel")
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
		return fmt.Errorf("archive %s is a file archive: name a path inside it", ar.Name)
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
	r := store.NewIndexReader(a.ctx, x, c, readahead)
	if _, err := r.WriteTo(a.stdout); err != nil {
		return fmt.Errorf("snapshot %s archive %s: %w", snap, ar.Name, err)
	}
	return nil
}
