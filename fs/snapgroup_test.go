package fs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/fs/layout"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// blobSnapshot finishes a backup of g at tm holding one blob, name.
func blobSnapshot(t *testing.T, s *store.Store, g store.Group, tm time.Time, name string) store.Snapshot {
	t.Helper()
	b, err := s.StartBackup(context.Background(), g, tm)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	blob, err := chunk.EncodeBlob(nil, []byte("data of "+name), false)
	if err == nil {
		err = b.AddBlob(name, blob)
	}
	if err == nil {
		err = b.Finish()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

// mountCounting returns a function that mounts s, runs check on the
// mount, unmounts (the index is written) and returns the names opened
// in the directory watch watches meanwhile.
func mountCounting(t *testing.T, s *store.Store, watch *opens) func(what string, check func(mnt string)) []string {
	return func(what string, check func(mnt string)) []string {
		t.Helper()
		srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
		watch.take()
		check(mnt)
		opened := watch.take()
		if err := srv.Unmount(); err != nil {
			t.Fatalf("%s: unmount: %v", what, err)
		}
		return opened
	}
}

// TestListingGroupUnchanged: while a group's directory is unchanged, a
// mount lists its finished snapshots from the index without looking at
// their manifests: a manifest rewritten since (new notes: a new file,
// same protected part) is neither opened nor, as the listing proves,
// stat'ed (a stat would see another inode and read it). Reading goes
// through the manifest. A snapshot added to the group is seen at once,
// and then every manifest is checked again.
func TestListingGroupUnchanged(t *testing.T) {
	needFUSE(t)
	s, snap, conf := indexedStore(t)
	watch := watchOpens(t, s.SnapshotPath(snap))
	mountOnce := mountCounting(t, s, watch)
	snapDir := func(mnt string) string { return filepath.Join(mnt, snap.String()) }
	mountOnce("first", func(mnt string) { listAndStat(t, snapDir(mnt), conf) })
	err := s.UpdateManifest(context.Background(), snap, func(m *store.Manifest) error {
		m.Unprotected["notes"], _ = json.Marshal("changed")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	unchanged := mountOnce("unchanged", func(mnt string) { listAndStat(t, snapDir(mnt), conf) })
	if len(unchanged) != 0 {
		t.Fatalf("listing an unchanged group opened %v", unchanged)
	}
	read := mountOnce("read", func(mnt string) {
		listAndStat(t, snapDir(mnt), conf)
		if got, err := os.ReadFile(filepath.Join(snapDir(mnt), "root.pxar", "f")); err != nil || string(got) != "hi\n" {
			t.Fatalf("f: %q, %v", got, err)
		}
	})
	if !slices.Contains(read, store.ManifestName) {
		t.Fatalf("reading opened %v: want the manifest", read)
	}
	added := blobSnapshot(t, s, snap.Group, snap.Time.Add(time.Hour), "new.blob")
	changed := mountOnce("changed", func(mnt string) {
		group := filepath.Join(mnt, snap.Group.String())
		if got, want := readNames(t, group), []string{snap.TimeString(), added.TimeString(), layout.Latest}; !slices.Equal(got, want) {
			t.Fatalf("group lists %v, want %v", got, want)
		}
		listAndStat(t, snapDir(mnt), conf)
	})
	if !slices.Contains(changed, store.ManifestName) {
		t.Fatalf("after a change of the group, the rewritten manifest was not read again: opened %v", changed)
	}
}

// listedStore is indexedStore after a mount listed its snapshot (the
// snapshot index has its listing).
func listedStore(t *testing.T) (*store.Store, store.Snapshot, []byte) {
	t.Helper()
	s, snap, conf := indexedStore(t)
	srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	listAndStat(t, filepath.Join(mnt, snap.String()), conf)
	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	return s, snap, conf
}

// TestListingGroupReusedInode: a snapshot forgotten and backed up again
// under the same name (its directory may get the old inode back) lists
// what the new manifest says, at once and from the index later.
func TestListingGroupReusedInode(t *testing.T) {
	needFUSE(t)
	s, snap, _ := listedStore(t)
	var before, after unix.Stat_t
	if err := unix.Stat(s.SnapshotPath(snap), &before); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(context.Background(), snap); err != nil {
		t.Fatal(err)
	}
	blobSnapshot(t, s, snap.Group, snap.Time, "other.blob")
	if err := unix.Stat(s.SnapshotPath(snap), &after); err != nil {
		t.Fatal(err)
	}
	t.Logf("snapshot directory's inode %d, then %d", before.Ino, after.Ino)
	for i, wait := range []time.Duration{0, 2100 * time.Millisecond, 0} {
		time.Sleep(wait) // then the group's state is recorded, then used
		srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
		if got := readNames(t, filepath.Join(mnt, snap.String())); !slices.Equal(got, []string{"other.blob"}) {
			t.Fatalf("mount %d lists %v, want [other.blob]", i, got)
		}
		if err := srv.Unmount(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestListingGroupForged: an index entry forged to vouch for an
// unfinished snapshot directory (the group's real state, the directory's
// real inode, another snapshot's listing) lists it, but serves no byte:
// every open reads the manifest, which is not there.
func TestListingGroupForged(t *testing.T) {
	needFUSE(t)
	s, snap, _ := listedStore(t)
	forged := snap
	forged.Time = snap.Time.Add(-time.Hour)
	if err := os.Mkdir(s.SnapshotPath(forged), 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // the group's new state settles
	var g, d unix.Stat_t
	if err := unix.Stat(s.GroupPath(snap.Group), &g); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(s.SnapshotPath(forged), &d); err != nil {
		t.Fatal(err)
	}
	ipath := filepath.Join(s.Root(), store.SnapIndexName)
	var f map[string]any
	if data, err := os.ReadFile(ipath); err != nil || json.Unmarshal(data, &f) != nil {
		t.Fatalf("index: %v", err)
	}
	es := f["entries"].(map[string]any)
	e := map[string]any{}
	for k, v := range es[snap.String()].(map[string]any) {
		e[k] = v
	}
	e["g"] = map[string]any{"i": g.Ino, "m": g.Mtim.Nano(), "c": g.Ctim.Nano()}
	e["d"] = d.Ino
	es[forged.String()] = e
	data, _ := json.Marshal(f)
	if err := os.WriteFile(ipath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	_, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	dir := filepath.Join(mnt, forged.String())
	if got := readNames(t, dir); !slices.Equal(got, []string{"conf.blob", "root.pxar"}) {
		t.Fatalf("forged snapshot lists %v", got)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "conf.blob")); err == nil {
		t.Fatalf("conf.blob of a snapshot with no manifest: %d bytes", len(got))
	}
	if got, err := os.ReadFile(filepath.Join(dir, "root.pxar", "f")); err == nil {
		t.Fatalf("root.pxar/f of a snapshot with no manifest: %q", got)
	}
}
