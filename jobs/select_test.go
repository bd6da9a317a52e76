package jobs

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestSelectSnapshots: finished snapshots are listed, unfinished ones of
// the tree logged and left out, refs that do not resolve (missing,
// unfinished) are the job's errors, and a cancelled walk ends with ctx's
// error.
func TestSelectSnapshots(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{NS: "select", Type: store.TypeHost, ID: "1"}
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	done := storetest.BackupImage(t, s, g, t0, storetest.Image{Data: storetest.RandBytes("select", 64<<10), ChunkSize: 64 << 10})
	b, err := s.StartBackup(t.Context(), g, t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	unfinished := b.Snapshot()

	j := newJob("id", "test", nil, nopWork{}, slog.New(slog.DiscardHandler))
	got, err := j.SelectSnapshots(t.Context(), s, store.Selector{NS: "select"}, "tested")
	if err != nil || !slices.Equal(got, []store.Snapshot{done}) || j.ErrorCount() != 0 {
		t.Fatalf("tree: %v %v, %d errors", got, err, j.ErrorCount())
	}
	if log := strings.Join(j.Log(), "\n"); !strings.Contains(log, unfinished.String()+": unfinished (no manifest), not tested") {
		t.Errorf("unfinished snapshot not logged: %s", log)
	}

	sel, err := store.ParseSelector("select", []string{"host/1", unfinished.String(), "host/2", done.String()})
	if err != nil {
		t.Fatal(err)
	}
	j = newJob("id", "test", nil, nopWork{}, slog.New(slog.DiscardHandler))
	got, err = j.SelectSnapshots(t.Context(), s, sel, "tested")
	if err != nil || !slices.Equal(got, []store.Snapshot{done}) || j.ErrorCount() != 2 {
		t.Fatalf("refs: %v %v, %d errors", got, err, j.ErrorCount())
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if got, err := j.SelectSnapshots(ctx, s, store.Selector{NS: "select"}, "tested"); err != context.Canceled || got != nil {
		t.Errorf("cancelled: %v %v", got, err)
	}
}
