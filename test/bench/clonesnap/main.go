// Command clonesnap makes N new snapshots of a group from one existing
// snapshot, for the scale benchmarks (test/bench/scale-browse.sh): each
// clone is a real snapshot written through the store's backup code
// (StartBackup, the snapshot's index and blob files copied unchanged,
// AddFile with the same size and checksum, Finish writing the manifest
// last), one second after the group's newest, so it lists, mounts and
// verifies like a backup whose data did not change, without walking the
// tree again.
//
//	clonesnap -store DIR -from TYPE/ID/TIME -n N
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/store"
)

func main() {
	dir := flag.String("store", "", "store directory")
	from := flag.String("from", "", "snapshot to clone: TYPE/ID/TIME or TYPE/ID (latest)")
	n := flag.Int("n", 1, "number of clones")
	flag.Parse()
	if err := run(*dir, *from, *n); err != nil {
		fmt.Fprintln(os.Stderr, "clonesnap:", err)
		os.Exit(1)
	}
}

func run(dir, from string, n int) error {
	s, err := store.Open(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	ref, err := store.ParseRef(from)
	if err != nil {
		return err
	}
	src, err := s.Resolve(ref)
	if err != nil {
		return err
	}
	m, err := s.ReadManifest(src)
	if err != nil {
		return err
	}
	ctx := context.Background()
	for i := 0; i < n; i++ {
		latest, err := s.Latest(src.Group)
		if err != nil {
			return err
		}
		t := latest.Time.Add(time.Second)
		if err := clone(ctx, s, src, m, t); err != nil {
			return err
		}
	}
	return nil
}

// clone writes one copy of snapshot src (manifest m) at time t.
func clone(ctx context.Context, s *store.Store, src store.Snapshot, m *store.Manifest, t time.Time) error {
	b, err := s.StartBackup(ctx, src.Group, t)
	if err != nil {
		return err
	}
	for _, fi := range m.Files {
		if err := copyFile(filepath.Join(s.SnapshotPath(src), fi.Filename), filepath.Join(b.Dir(), fi.Filename)); err != nil {
			b.Abort()
			return err
		}
		if err := b.AddFile(fi); err != nil {
			b.Abort()
			return err
		}
	}
	if err := b.Finish(); err != nil {
		return fmt.Errorf("clone of %s at %s: %w", src, t, err)
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
