package tape

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/jobs/tape/media"
	"github.com/cairnfs/cairn/store"
)

func TestExportRestoreRoundTrip(t *testing.T) {
	f := newFixture(t)
	d := openDrive(t, t.TempDir())
	snaps := []string{f.a, f.b, f.c}
	rep, err := Export(bg, d, f.src, snaps, exportOpts(2))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed() != 0 || len(rep.Snapshots) != 3 || len(rep.Tapes) < 2 {
		t.Fatalf("export report %+v", rep)
	}
	// every chunk was written exactly once
	unique := map[chunk.Digest]bool{}
	for _, s := range snaps {
		ds, _ := f.src.Chunks(bg, s)
		for _, x := range ds {
			unique[x] = true
		}
	}
	if rep.Chunks != int64(len(unique)) {
		t.Fatalf("wrote %d chunks, snapshots have %d distinct", rep.Chunks, len(unique))
	}

	target := newStore(t)
	sink, err := NewStoreSink(bg, target)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet})
	sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	if rr.Failed() != 0 || len(rr.Snapshots) != 3 || rr.Chunks != int64(len(unique)) {
		t.Fatalf("restore report %+v", rr)
	}
	for _, s := range snaps {
		sameSnapshot(t, f.s, target, s)
		checkChunks(t, f.src, target, s)
	}

	// a second restore finds everything present
	sink, _ = NewStoreSink(bg, target)
	rr, err = Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet})
	sink.Close()
	if err != nil || rr.Chunks != 0 || len(rr.FilesRead) != 0 {
		t.Fatalf("second restore: %+v %v", rr, err)
	}
	for _, s := range rr.Snapshots {
		if s.State != StatePresent {
			t.Fatalf("second restore: %+v", s)
		}
	}
}

func TestExportAgainWritesOnlyNew(t *testing.T) {
	f := newFixture(t)
	d := openDrive(t, t.TempDir())
	if _, err := Export(bg, d, f.src, []string{f.a, f.b}, exportOpts(1)); err != nil {
		t.Fatal(err)
	}
	rep, err := Export(bg, d, f.src, []string{f.a, f.b, f.c}, exportOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	old := map[chunk.Digest]bool{}
	for _, s := range []string{f.a, f.b} {
		ds, _ := f.src.Chunks(bg, s)
		for _, x := range ds {
			old[x] = true
		}
	}
	dc, _ := f.src.Chunks(bg, f.c)
	newC := 0
	for _, x := range dc {
		if !old[x] {
			newC++
		}
	}
	if rep.Chunks != int64(newC) || newC == 0 || newC == len(dc) {
		t.Fatalf("second export wrote %d chunks, c has %d new of %d", rep.Chunks, newC, len(dc))
	}
	states := []string{rep.Snapshots[0].State, rep.Snapshots[1].State, rep.Snapshots[2].State}
	if !slices.Equal(states, []string{StatePresent, StatePresent, StateDone}) {
		t.Fatalf("states %v", states)
	}
}

func TestSelectiveRestore(t *testing.T) {
	f := newFixture(t)
	d := openDrive(t, t.TempDir())
	rep, err := Export(bg, d, f.src, []string{f.a, f.b, f.c}, exportOpts(1))
	if err != nil {
		t.Fatal(err)
	}
	r, err := media.OpenSet(d, mustUUID(t, rep.MediaSet))
	if err != nil {
		t.Fatal(err)
	}
	labels := map[format.UUID]string{}
	for _, m := range r.Members() {
		labels[m.Label.UUID] = m.Label.LabelText
	}
	archives := 0
	for _, c := range r.Catalog().Catalogs() {
		for _, file := range c.Files() {
			if file.Kind == catalog.KindChunkArchive {
				archives++
			}
		}
	}
	// the tape files that hold snapshot a's chunks
	want := map[string]bool{}
	da, _ := f.src.Chunks(bg, f.a)
	for _, x := range da {
		m, n, _ := r.Catalog().LookupChunk("store1", x)
		want[fmt.Sprintf("%s:%d", labels[m], n)] = true
	}
	r.Close()
	target := newStore(t)
	sink, _ := NewStoreSink(bg, target)
	rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Snapshots: []string{f.a}, Logger: quiet})
	sink.Close()
	if err != nil || rr.Failed() != 0 || len(rr.Snapshots) != 1 {
		t.Fatalf("restore: %+v %v", rr, err)
	}
	sameSnapshot(t, f.s, target, f.a)
	checkChunks(t, f.src, target, f.a)
	got := map[string]bool{}
	for _, x := range rr.FilesRead {
		got[x] = true
	}
	if !maps.Equal(got, want) || len(got) >= archives {
		t.Fatalf("read chunk archives %v, want %v (of %d)", rr.FilesRead, want, archives)
	}
	if ok, _ := (&StoreSink{s: target}).HasSnapshot(f.b); ok {
		t.Fatal("snapshot b restored too")
	}
	// restoring everything now skips a and the chunks b and c share
	// with it
	sink, _ = NewStoreSink(bg, target)
	rr, err = Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet})
	sink.Close()
	if err != nil || rr.Failed() != 0 || rr.ChunksPresent == 0 || rr.Chunks != rep.Chunks-int64(len(da)) {
		t.Fatalf("restore after a: %d present (a has %d), %d restored of %d, %v", rr.ChunksPresent, len(da), rr.Chunks, rep.Chunks, err)
	}
	_, err = Restore(bg, d, &StoreSink{s: target}, RestoreOptions{Pool: "pool", Snapshots: []string{"vm/9/2020-01-01T00:00:00Z"}, Logger: quiet})
	if !errors.Is(err, media.ErrUnknown) {
		t.Fatalf("restore of an unknown snapshot: %v", err)
	}
}

// Any number of workers writes the same chunks and snapshots.
func TestWorkerCounts(t *testing.T) {
	f := newFixture(t)
	var ref []chunk.Digest
	for _, n := range []int{1, 2, 4, 8} {
		d := openDrive(t, t.TempDir())
		rep, err := Export(bg, d, f.src, []string{f.a, f.b, f.c}, exportOpts(n))
		if err != nil || rep.Failed() != 0 {
			t.Fatalf("%d workers: %v %+v", n, err, rep)
		}
		r, err := media.OpenSet(d, mustUUID(t, rep.MediaSet))
		if err != nil {
			t.Fatal(err)
		}
		var got []chunk.Digest
		for _, s := range []string{f.a, f.b, f.c} {
			ds, _ := f.src.Chunks(bg, s)
			for _, x := range ds {
				if !r.Catalog().ContainsChunk("store1", x) {
					t.Fatalf("%d workers: chunk %s not on tape", n, x)
				}
			}
			got = append(got, ds...)
		}
		if len(r.Catalog().Snapshots()) != 3 {
			t.Fatalf("%d workers: %d snapshots on tape", n, len(r.Catalog().Snapshots()))
		}
		r.Close()
		slices.SortFunc(got, func(a, b chunk.Digest) int { return slices.Compare(a[:], b[:]) })
		if ref == nil {
			ref = got
		} else if !slices.Equal(ref, got) {
			t.Fatalf("%d workers: other chunks", n)
		}
		if n == 8 {
			target := newStore(t)
			sink, _ := NewStoreSink(bg, target)
			rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet, Workers: 2})
			sink.Close()
			if err != nil || rr.Failed() != 0 {
				t.Fatalf("restore after 8 workers: %+v %v", rr, err)
			}
			sameSnapshot(t, f.s, target, f.b)
		}
	}
	if _, err := Export(bg, openDrive(t, t.TempDir()), f.src, nil, exportOpts(33)); err == nil {
		t.Fatal("33 workers accepted")
	}
}

// cancelSource cancels the export after n chunk loads.
type cancelSource struct {
	*StoreSource
	n      atomic.Int64
	cancel context.CancelFunc
}

func (c *cancelSource) LoadChunk(ctx context.Context, d chunk.Digest) ([]byte, error) {
	if c.n.Add(-1) == 0 {
		c.cancel()
	}
	return c.StoreSource.LoadChunk(ctx, d)
}

func (c *cancelSource) LoadChunkInto(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
	if c.n.Add(-1) == 0 {
		c.cancel()
	}
	return c.StoreSource.LoadChunkInto(ctx, d, buf)
}

func TestCancelledExportLeavesUsableSet(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	d := openDrive(t, dir)
	ctx, cancel := context.WithCancel(bg)
	src := &cancelSource{StoreSource: f.src, cancel: cancel}
	src.n.Store(30)
	rep, err := Export(ctx, d, src, []string{f.a, f.b, f.c}, exportOpts(2))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export: %v", err)
	}
	if rep.Failed() == 0 && len(rep.Snapshots) == 3 {
		t.Fatalf("cancelled export finished everything: %+v", rep)
	}
	rep, err = Export(bg, d, f.src, []string{f.a, f.b, f.c}, exportOpts(2))
	if err != nil || rep.Failed() != 0 {
		t.Fatalf("export after cancel: %+v %v", rep, err)
	}
	target := newStore(t)
	sink, _ := NewStoreSink(bg, target)
	rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet})
	sink.Close()
	if err != nil || rr.Failed() != 0 || len(rr.Snapshots) != 3 {
		t.Fatalf("restore after cancelled export: %+v %v", rr, err)
	}
	for _, s := range []string{f.a, f.b, f.c} {
		sameSnapshot(t, f.s, target, s)
	}
}

func TestCorruptChunkWhileExporting(t *testing.T) {
	f := newFixture(t)
	// a chunk only snapshot a has (its last MiB is not in b or c)
	da, _ := f.src.Chunks(bg, f.a)
	bad := da[len(da)-1]
	path := f.s.ChunkPath(bad)
	raw, _ := os.ReadFile(path)
	raw[len(raw)/2] ^= 0xff
	os.WriteFile(path, raw, 0o644)
	d := openDrive(t, t.TempDir())
	cr := &countingReporter{}
	opts := exportOpts(2)
	opts.Reporter = cr
	rep, err := Export(bg, d, f.src, []string{f.a, f.b, f.c}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Snapshots[0].State != StateFailed || rep.Snapshots[1].State != StateDone || rep.Snapshots[2].State != StateDone {
		t.Fatalf("states %+v", rep.Snapshots)
	}
	if cr.errors.Load() == 0 || cr.items.Load() != rep.Chunks {
		t.Fatalf("reporter: %d errors, %d chunks; report %d chunks", cr.errors.Load(), cr.items.Load(), rep.Chunks)
	}
	target := newStore(t)
	sink, _ := NewStoreSink(bg, target)
	rr, err := Restore(bg, d, sink, RestoreOptions{Pool: "pool", Logger: quiet})
	sink.Close()
	if err != nil || len(rr.Snapshots) != 2 || rr.Failed() != 0 {
		t.Fatalf("restore: %+v %v", rr, err)
	}
	if ok, _ := (&StoreSink{s: target}).HasSnapshot(f.a); ok {
		t.Fatal("snapshot with a corrupt chunk appeared")
	}
}

func TestFullTapeNoOtherTape(t *testing.T) {
	f := newFixture(t)
	d := openDrive(t, t.TempDir())
	if err := d.CreateTape("only", 2<<20); err != nil {
		t.Fatal(err)
	}
	opts := exportOpts(1)
	opts.PoolOptions = media.PoolOptions{}
	rep, err := Export(bg, d, f.src, []string{f.a, f.b, f.c}, opts)
	if !errors.Is(err, media.ErrNoTape) {
		t.Fatalf("export to a full pool: %v", err)
	}
	if rep == nil || len(rep.Tapes) != 1 || rep.Tapes[0] != "only" {
		t.Fatalf("report %+v", rep)
	}
	// what is on the tape is consistent: its catalog matches a rebuild
	c, err := media.RebuildCatalog(bg, d, "only", quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r, err := media.OpenSet(d, mustUUID(t, rep.MediaSet))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Catalog().Catalogs()[0].Chunks("store1"); got != c.Chunks("store1") || got == 0 {
		t.Fatalf("catalog %d chunks, tape %d", got, c.Chunks("store1"))
	}
}

func TestInodeOrderSource(t *testing.T) {
	f := newFixture(t)
	src := &StoreSource{S: f.s, StoreName: "store1", InodeOrder: true}
	ds, _ := src.Chunks(bg, f.a)
	ordered := src.OrderChunks(bg, ds)
	if len(ordered) != len(ds) {
		t.Fatal("OrderChunks lost chunks")
	}
	var last uint64
	for _, d := range ordered {
		ci, err := f.s.StatChunk(d)
		if err != nil || ci.Inode < last {
			t.Fatalf("not in inode order: %v", err)
		}
		last = ci.Inode
	}
	if _, err := ParseSnapshot("vm/100"); !errors.Is(err, store.ErrBadName) {
		t.Fatalf("ParseSnapshot without time: %v", err)
	}
}
