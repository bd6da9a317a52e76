package usage_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/store/usage"
)

const cs = chunk.MinChunkSize // 64 KiB chunks: small stores, many chunks

// block is one chunk of data named by name (the same name, the same chunk).
func block(name string) []byte { return storetest.RandBytes(name, cs) }

func image(names ...string) []byte {
	var b []byte
	for _, n := range names {
		if n == "0" {
			b = append(b, make([]byte, cs)...)
			continue
		}
		b = append(b, block(n)...)
	}
	return b
}

// fixture is three snapshots of two groups:
//
//	a/1: A B B (B twice)     a/2: A C     b/1: A D 0 0 (the zero chunk twice)
//
// so a/1 alone has B, a/2 alone C, b/1 alone D and the zero chunk, and A
// is everyone's.
type fixture struct {
	s          *store.Store
	a1, a2, b1 store.Snapshot
}

var t0 = time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)

func newFixture(t *testing.T) fixture {
	t.Helper()
	s := storetest.NewStore(t)
	ga := store.Group{Type: "host", ID: "a"}
	gb := store.Group{Type: "host", ID: "b"}
	img := func(g store.Group, at time.Time, names ...string) store.Snapshot {
		return storetest.BackupImage(t, s, g, at, storetest.Image{Data: image(names...), ChunkSize: cs})
	}
	return fixture{s: s,
		a1: img(ga, t0, "A", "B", "B"),
		a2: img(ga, t0.Add(time.Hour), "A", "C"),
		b1: img(gb, t0, "A", "D", "0", "0"),
	}
}

// stored is the chunk file size of the chunk holding data.
func stored(t *testing.T, s *store.Store, data []byte) int64 {
	t.Helper()
	ci, err := s.StatChunk(chunk.Sum(data))
	if err != nil {
		t.Fatal(err)
	}
	return ci.Size
}

func bytesOf(t *testing.T, s *store.Store, names ...string) usage.Bytes {
	t.Helper()
	var b usage.Bytes
	for _, n := range names {
		b.Chunks++
		b.Logical += cs
		b.Stored += stored(t, s, image(n))
	}
	return b
}

// dirBytes sums a snapshot directory's regular files.
func dirBytes(t *testing.T, s *store.Store, snap store.Snapshot) (n, size int64) {
	t.Helper()
	ents, err := os.ReadDir(s.SnapshotPath(snap))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		fi, _ := e.Info()
		n, size = n+1, size+fi.Size()
	}
	return n, size
}

func compute(t *testing.T, s *store.Store, opt usage.Options) *usage.Report {
	t.Helper()
	rep, err := usage.Compute(context.Background(), s, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func find(t *testing.T, rep *usage.Report, snap store.Snapshot) usage.Snapshot {
	t.Helper()
	for _, u := range rep.Snapshots {
		if u.Snapshot == snap {
			return u
		}
	}
	t.Fatalf("%s not in the report", snap)
	return usage.Snapshot{}
}

func TestSnapshotsAndGroups(t *testing.T) {
	f := newFixture(t)
	rep := compute(t, f.s, usage.Options{})
	if len(rep.Errors) > 0 || rep.Missing != 0 || !rep.StoredKnown {
		t.Fatalf("errors %v, missing %d, stored known %v", rep.Errors, rep.Missing, rep.StoredKnown)
	}
	for _, c := range []struct {
		snap          store.Snapshot
		total, unique []string
	}{
		{f.a1, []string{"A", "B"}, []string{"B"}},
		{f.a2, []string{"A", "C"}, []string{"C"}},
		{f.b1, []string{"A", "D", "0"}, []string{"D", "0"}},
	} {
		u := find(t, rep, c.snap)
		if want := bytesOf(t, f.s, c.total...); u.Total != want {
			t.Errorf("%s total %+v, want %+v", c.snap, u.Total, want)
		}
		if want := bytesOf(t, f.s, c.unique...); u.Unique != want {
			t.Errorf("%s unique %+v, want %+v", c.snap, u.Unique, want)
		}
		if want := bytesOf(t, f.s, "A"); u.Shared() != want {
			t.Errorf("%s shared %+v, want %+v", c.snap, u.Shared(), want)
		}
		n, size := dirBytes(t, f.s, c.snap)
		if u.Files != n || u.FileBytes != size || u.Freed() != u.Unique.Stored+size {
			t.Errorf("%s files %d (%d bytes), want %d (%d)", c.snap, u.Files, u.FileBytes, n, size)
		}
	}
	if len(rep.Groups) != 2 {
		t.Fatalf("groups %+v", rep.Groups)
	}
	ga, gb := rep.Groups[0], rep.Groups[1]
	if want := bytesOf(t, f.s, "A", "B", "C"); ga.Snapshots != 2 || ga.Total != want {
		t.Errorf("group a: %d snapshots, total %+v, want 2, %+v", ga.Snapshots, ga.Total, want)
	}
	if want := bytesOf(t, f.s, "B", "C"); ga.Unique != want {
		t.Errorf("group a unique %+v, want %+v", ga.Unique, want)
	}
	if want := bytesOf(t, f.s, "D", "0"); gb.Unique != want {
		t.Errorf("group b unique %+v, want %+v", gb.Unique, want)
	}
	if want := bytesOf(t, f.s, "A", "B", "C", "D", "0"); rep.All.Total != want {
		t.Errorf("all %+v, want %+v", rep.All.Total, want)
	}
}

func TestRemoved(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		remove []store.Snapshot
		freed  []string
	}{
		{nil, nil},
		{[]store.Snapshot{f.a1}, []string{"B"}},
		{[]store.Snapshot{f.a1, f.a2}, []string{"B", "C"}},
		{[]store.Snapshot{f.a1, f.b1}, []string{"B", "D", "0"}},
		{[]store.Snapshot{f.a1, f.a2, f.b1}, []string{"A", "B", "C", "D", "0"}}, // A: shared only among them
	} {
		rep := compute(t, f.s, usage.Options{Remove: func(s store.Snapshot) bool { return slices.Contains(c.remove, s) }})
		if want := bytesOf(t, f.s, c.freed...); rep.Removed.Unique != want {
			t.Errorf("remove %v: freed %+v, want %+v", c.remove, rep.Removed.Unique, want)
		}
		var files int64
		for _, snap := range c.remove {
			_, size := dirBytes(t, f.s, snap)
			files += size
		}
		if rep.Removed.FileBytes != files {
			t.Errorf("remove %v: file bytes %d, want %d", c.remove, rep.Removed.FileBytes, files)
		}
	}
}

// TestFreedMatchesRemoval forgets a snapshot and removes the chunks no
// index references any more, as garbage collection does, and checks the
// bytes removed are the ones reported.
func TestFreedMatchesRemoval(t *testing.T) {
	f := newFixture(t)
	want := find(t, compute(t, f.s, usage.Options{}), f.a2).Unique.Stored
	before := chunkBytes(t, f.s)
	if err := f.s.ForgetSnapshot(context.Background(), f.a2); err != nil {
		t.Fatal(err)
	}
	keep := map[chunk.Digest]bool{}
	for _, snap := range []store.Snapshot{f.a1, f.b1} {
		for _, d := range storetest.ChunksOf(t, f.s, snap) {
			keep[d] = true
		}
	}
	err := f.s.WalkChunks(context.Background(), func(d chunk.Digest) error {
		if keep[d] {
			return nil
		}
		return os.Remove(f.s.ChunkPath(d))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := before - chunkBytes(t, f.s); got != want {
		t.Errorf("removal freed %d bytes, reported %d", got, want)
	}
}

func chunkBytes(t *testing.T, s *store.Store) int64 {
	t.Helper()
	var n int64
	err := s.WalkChunks(context.Background(), func(d chunk.Digest) error {
		ci, err := s.StatChunk(d)
		n += ci.Size
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestHostileIndex(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func([]byte) []byte
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-7] }},
		{"short header", func(b []byte) []byte { return b[:100] }},
		{"bad magic", func(b []byte) []byte { b[0] ^= 0xff; return b }},
		{"huge size", func(b []byte) []byte { copy(b[64:72], bytes.Repeat([]byte{0xff}, 8)); return b }},
		{"empty", func([]byte) []byte { return nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			path := filepath.Join(f.s.SnapshotPath(f.a2), "disk.img.fidx")
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := compute(t, f.s, usage.Options{})
			u := find(t, rep, f.a2)
			if u.Err == nil || !strings.Contains(u.Err.Error(), "disk.img.fidx") || !strings.Contains(u.Err.Error(), f.a2.String()) {
				t.Fatalf("error %v, want one naming %s and the index", u.Err, f.a2)
			}
			if !errors.Is(u.Err, index.ErrFormat) || len(rep.Errors) != 1 {
				t.Errorf("error %v (report: %v), want index.ErrFormat once", u.Err, rep.Errors)
			}
			if u.Total.Chunks != 0 {
				t.Errorf("unreadable index counted: %+v", u.Total)
			}
			// a1 now looks alone with A among group a
			if want := bytesOf(t, f.s, "B"); find(t, rep, f.a1).Unique != want {
				t.Errorf("a1 unique %+v, want %+v", find(t, rep, f.a1).Unique, want)
			}
		})
	}
}

func TestMissingChunk(t *testing.T) {
	f := newFixture(t)
	if err := os.Remove(f.s.ChunkPath(chunk.Sum(block("C")))); err != nil {
		t.Fatal(err)
	}
	rep := compute(t, f.s, usage.Options{})
	if rep.Missing != 1 || len(rep.Errors) != 0 {
		t.Fatalf("missing %d, errors %v", rep.Missing, rep.Errors)
	}
	u := find(t, rep, f.a2)
	if u.Unique.Chunks != 1 || u.Unique.Logical != cs || u.Unique.Stored != 0 {
		t.Errorf("a2 unique %+v: want the missing chunk's logical size only", u.Unique)
	}
}

func TestUnfinishedHoldsChunks(t *testing.T) {
	f := newFixture(t)
	if err := os.Remove(filepath.Join(f.s.SnapshotPath(f.a1), store.ManifestName)); err != nil {
		t.Fatal(err)
	}
	rep := compute(t, f.s, usage.Options{})
	u := find(t, rep, f.a1)
	if u.Finished || u.Unique != bytesOf(t, f.s, "B") {
		t.Errorf("unfinished a1: finished %v, unique %+v", u.Finished, u.Unique)
	}
}

func TestEmptyStore(t *testing.T) {
	rep := compute(t, storetest.NewStore(t), usage.Options{})
	if len(rep.Snapshots) != 0 || len(rep.Groups) != 0 || rep.All.Total.Chunks != 0 {
		t.Errorf("empty store: %+v", rep)
	}
}

func TestCancelled(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := usage.Compute(ctx, f.s, usage.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRemoteStore: on object storage chunk sizes are not read (a request
// each): logical figures only, said by StoredKnown.
func TestRemoteStore(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	g := store.Group{Type: "host", ID: "r"}
	a := storetest.BackupImage(t, s, g, t0, storetest.Image{Data: image("A", "B"), ChunkSize: cs})
	storetest.BackupImage(t, s, g, t0.Add(time.Hour), storetest.Image{Data: image("A", "C"), ChunkSize: cs})
	rep := compute(t, s, usage.Options{Remove: func(x store.Snapshot) bool { return x == a }})
	u := find(t, rep, a)
	if rep.StoredKnown || len(rep.Errors) > 0 || rep.Missing != 0 {
		t.Fatalf("stored known %v, errors %v, missing %d", rep.StoredKnown, rep.Errors, rep.Missing)
	}
	want := usage.Bytes{Chunks: 1, Logical: cs}
	if u.Unique != want || u.Total.Logical != 2*cs || rep.Removed.Unique != want || u.FileBytes == 0 {
		t.Errorf("remote: unique %+v, total %+v, removed %+v, files %d", u.Unique, u.Total, rep.Removed.Unique, u.FileBytes)
	}
}
