package e2e

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// AppendSnapshotArchive writes, at the end of the current media set of
// pool on the virtual tape drive in driveDir, a snapshot archive that
// claims snapshot of datastore storeName and holds the files of dir in
// the order given: what a tampered tape holds beside, or instead of, the
// archive an export wrote. The tape's catalog records it as an export
// would.
func AppendSnapshotArchive(t testing.TB, driveDir, pool, storeName, snapshot, dir string, files []string) {
	t.Helper()
	ctx := context.Background()
	d, err := drive.Open(ctx, driveDir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p, err := media.OpenPool(d, pool, media.PoolOptions{TapeSize: 64 << 20, AutoCreate: true}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(media.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.WriteSnapshot(ctx, storeName, snapshot, os.DirFS(dir), files)
	if cerr := w.Close(ctx); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatalf("append a snapshot archive of %s to pool %s: %v", snapshot, pool, err)
	}
}
