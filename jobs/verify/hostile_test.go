package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
)

// badFiles lists the chunks of c that verify moved aside.
func badFiles(t *testing.T, s *store.Store, c []hostile.Chunk) []string {
	t.Helper()
	var out []string
	for _, ch := range c {
		bad, err := filepath.Glob(s.ChunkPath(ch.Digest) + ".*bad")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, bad...)
	}
	return out
}

// goodInNS stores four chunks for namespace ns and a good snapshot of
// group id listing them; g makes groups of ns.
func goodInNS(t *testing.T, s *store.Store, ns store.NS, id string) (c []hostile.Chunk, g func(string) store.Group, good store.Snapshot) {
	t.Helper()
	c, err := hostile.PutChunks(s, string(ns), 4, hostile.ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	g = func(id string) store.Group { return store.Group{NS: ns, Type: store.TypeVM, ID: id} }
	if good, _, err = hostile.WriteGood(t.Context(), s, g(id), t0, c); err != nil {
		t.Fatal(err)
	}
	return c, g, good
}

// TestVerifyKeepsGoodChunks: an index that gives good chunks the wrong
// size and a manifest that calls plain chunks encrypted fail their
// snapshots; the chunks stay where they are and the good snapshot that
// shares them verifies ok. Liars are verified both before the good
// snapshot (groups a-…: the chunk is read with the lie in hand) and after
// it (z-…: the chunk is known good by then).
func TestVerifyKeepsGoodChunks(t *testing.T) {
	s, ctx := testStore(t), t.Context()
	const ns = "keep-good"
	c, g, good := goodInNS(t, s, ns, "m-good")
	liars := map[store.Snapshot]string{} // → what its failure must say
	for _, prefix := range []string{"a-", "z-"} {
		snap, err := hostile.WriteCryptLie(ctx, s, g(prefix+"crypt"), t0, c)
		if err != nil {
			t.Fatal(err)
		}
		liars[snap] = "crypt mode says chunk"
		for _, ic := range hostile.IndexCases() {
			if ic.Name != "didx-size-disagrees" && ic.Name != "fidx-last-longer" {
				continue
			}
			snap, err := hostile.WriteIndexCase(ctx, s, g(prefix+ic.Name), t0, ic, c)
			if err != nil {
				t.Fatal(err)
			}
			liars[snap] = "the index says"
		}
	}
	st, rep, _ := runVerify(t, s, map[string]string{"ns": ns})
	if st.State != jobs.StateFailed || rep.SnapshotsOK != 1 || rep.SnapshotsFailed != len(liars) {
		t.Errorf("state %s: %d ok, %d failed, want 1 and %d", st.State, rep.SnapshotsOK, rep.SnapshotsFailed, len(liars))
	}
	if r, _ := resultOf(rep, good); r.State != SnapOK {
		t.Errorf("good snapshot: %+v", r)
	}
	for snap, want := range liars {
		r, _ := resultOf(rep, snap)
		errs := strings.Join(r.Errors, "\n")
		if r.State != SnapFailed || r.BadChunks != 0 || !r.Damaged || !strings.Contains(errs, want) ||
			!strings.Contains(errs, "stays in place") {
			t.Errorf("%s: %+v, want failed for %q with the chunk left in place", snap, r, want)
		}
	}
	if rep.ChunksCorrupt != 0 || len(rep.Corrupt) != 0 {
		t.Errorf("good chunks condemned: %+v", rep.Corrupt)
	}
	for i, ch := range c {
		if !exists(s.ChunkPath(ch.Digest)) {
			t.Errorf("chunk %d (%s) is gone", i, ch.Digest)
		}
	}
	if bad := badFiles(t, s, c); len(bad) != 0 {
		t.Errorf("chunks moved aside: %v", bad)
	}
	// The good snapshot verifies ok again, alone.
	_, rep, _ = runVerify(t, s, map[string]string{"snapshots": good.String()})
	if rep.SnapshotsOK != 1 || rep.SnapshotsFailed != 0 {
		t.Errorf("good snapshot verified alone: %+v", rep.Snapshots)
	}
}

// TestVerifyHostileIndexes: every class of hostile index fails its
// snapshot with a message naming the index, a random index fails if and
// only if it gives a chunk a wrong size, no good chunk is moved aside,
// and the good snapshot sharing the chunks verifies ok.
func TestVerifyHostileIndexes(t *testing.T) {
	s, ctx := testStore(t), t.Context()
	const ns = "hostile-idx"
	c, g, good := goodInNS(t, s, ns, "good")
	snaps := map[string]store.Snapshot{}
	cases := hostile.IndexCases()
	for seed := range uint64(20) {
		cases = append(cases, hostile.RandomDynamic(seed))
	}
	for _, ic := range cases {
		snap, err := hostile.WriteIndexCase(ctx, s, g(ic.Name), t0, ic, c)
		if err != nil {
			t.Fatal(err)
		}
		snaps[ic.Name] = snap
	}
	_, rep, _ := runVerify(t, s, map[string]string{"ns": ns})
	if r, _ := resultOf(rep, good); r.State != SnapOK {
		t.Errorf("good snapshot: %+v", r)
	}
	for _, ic := range hostile.IndexCases() {
		r, _ := resultOf(rep, snaps[ic.Name])
		if r.State != SnapFailed || !strings.Contains(strings.Join(r.Errors, "\n"), ic.File) {
			t.Errorf("%s: %+v, want failed naming %s", ic.Name, r, ic.File)
		}
	}
	for seed := range uint64(20) {
		ic := hostile.RandomDynamic(seed)
		r, _ := resultOf(rep, snaps[ic.Name])
		if want := map[bool]string{true: SnapFailed, false: SnapOK}[ic.Stage == hostile.AtRead]; r.State != want {
			t.Errorf("%s: %+v, want %s", ic.Name, r, want)
		}
	}
	for _, cc := range rep.Corrupt { // the missing chunk and the FIFO, none of c
		for _, ch := range c {
			if cc.Digest == ch.Digest.String() {
				t.Errorf("good chunk %s condemned: %s", cc.Digest, cc.Reason)
			}
		}
	}
	for i, ch := range c {
		if !exists(s.ChunkPath(ch.Digest)) {
			t.Errorf("chunk %d (%s) is gone", i, ch.Digest)
		}
	}
	if bad := badFiles(t, s, c); len(bad) != 0 {
		t.Errorf("chunks moved aside: %v", bad)
	}
	if _, err := os.Stat(s.SnapshotPath(good)); err != nil {
		t.Error(err)
	}
}
