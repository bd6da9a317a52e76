package s3store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sys/unix"
)

// Tests of a remote store's metadata against a real MinIO server
// (miniotest): publishing (manifest last), the local mirror's refresh
// (a second host; hostile keys), forget against writers (rule 3), and
// the leases (rule 1).

var day0 = time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)

func at(d int) time.Time { return day0.AddDate(0, 0, d) }

// twoHosts returns two store directories on one fresh bucket.
func twoHosts(t *testing.T) (a, b *store.Store) {
	t.Helper()
	a, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	return a, storetest.AttachRemoteStore(t, cfg)
}

func backupAt(t *testing.T, s *store.Store, g store.Group, d int) store.Snapshot {
	t.Helper()
	return storetest.BackupImage(t, s, g, at(d), storetest.Image{
		Data: storetest.RandBytes(fmt.Sprint(g, d), 200<<10), ChunkSize: 64 << 10,
		Blobs: map[string][]byte{"notes.blob": mustBlob(t, "n")}})
}

func mustBlob(t *testing.T, s string) []byte {
	t.Helper()
	b, err := chunk.EncodeBlob(nil, []byte(s), true)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mkfifo(path string) error { return unix.Mkfifo(path, 0o644) }

func snapKey(snap store.Snapshot, name string) string { return snap.String() + "/" + name }

// inBucket reports whether s's bucket has key.
func inBucket(t *testing.T, s *store.Store, key string) bool {
	t.Helper()
	_, err := s3store.BucketOf(s).Head(context.Background(), key)
	if err != nil && !errors.Is(err, objstore.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func finished(t *testing.T, s *store.Store, snap store.Snapshot) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(s.SnapshotPath(snap), store.ManifestName))
	return err == nil
}

func refresh(t *testing.T, s *store.Store) {
	t.Helper()
	if err := s.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
}

var vm1 = store.Group{Type: store.TypeVM, ID: "1"}

// A failed upload (one file that cannot be read) leaves no manifest, in
// the bucket or the directory; the next backup succeeds.
func TestRemoteFinishFailureLeavesNoManifest(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	ctx := context.Background()
	b, err := s.StartBackup(ctx, vm1, at(1))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	for i := range 8 {
		if err := b.AddBlob(fmt.Sprintf("f%d.blob", i), mustBlob(t, fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	// f7.blob becomes a FIFO: its upload fails (not a regular file)
	p := filepath.Join(b.Dir(), "f7.blob")
	os.Remove(p)
	if err := mkfifo(p); err != nil {
		t.Fatal(err)
	}
	err = b.Finish()
	if err == nil || !strings.Contains(err.Error(), "no manifest written") {
		t.Fatalf("Finish with an unreadable file: %v", err)
	}
	snap := b.Snapshot()
	if inBucket(t, s, snapKey(snap, store.ManifestName)) || finished(t, s, snap) {
		t.Fatal("a manifest was written although a file failed to upload")
	}
	next := backupAt(t, s, vm1, 2)
	if !inBucket(t, s, snapKey(next, store.ManifestName)) || !finished(t, s, next) {
		t.Fatal("the next backup is not finished")
	}
}

// A backup whose context is cancelled while Finish uploads its files
// never publishes its manifest, in any round; at least one round must
// have been cut short midway (some files uploaded, then the cancel).
func TestRemoteFinishCancelledMidway(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	midway := 0
	for round := 1; round <= 6 && midway == 0; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		b, err := s.StartBackup(ctx, vm1, at(round))
		if err != nil {
			t.Fatal(err)
		}
		b.Sync = store.SyncNone
		for i := range 300 {
			if err := b.AddBlob(fmt.Sprintf("f%03d.blob", i), mustBlob(t, strings.Repeat("x", i))); err != nil {
				t.Fatal(err)
			}
		}
		snap := b.Snapshot()
		seen := make(chan int, 1)
		go func() { // cancel once the bucket has some of the snapshot's files
			defer cancel()
			for {
				n := 0
				for _, err := range s3store.BucketOf(s).List(context.Background(), snap.String()+"/", "") {
					if err != nil {
						break
					}
					n++
				}
				if n > 0 || ctx.Err() != nil {
					seen <- n
					return
				}
			}
		}()
		err = b.Finish()
		cancel()
		n := <-seen
		if err == nil {
			t.Logf("round %d: Finish ended before the cancel", round)
			continue
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: %v", round, err)
		}
		if inBucket(t, s, snapKey(snap, store.ManifestName)) || finished(t, s, snap) {
			t.Fatalf("round %d: a cancelled Finish published the manifest", round)
		}
		if n > 0 {
			midway++
		}
	}
	if midway == 0 {
		t.Fatal("no round was cancelled midway through its uploads")
	}
}

// What one host publishes, a second host sees after its refresh: new
// snapshots, manifest updates, the protection marker, and forgets.
func TestRemoteSecondHostMirror(t *testing.T) {
	h1, h2 := twoHosts(t)
	ctx := context.Background()
	a := backupAt(t, h1, vm1, 1)
	b := backupAt(t, h1, vm1, 2)
	refresh(t, h2)
	if !finished(t, h2, a) || !finished(t, h2, b) {
		t.Fatal("the second host does not see the first host's snapshots")
	}
	m, err := h2.ReadManifest(b)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h2.OpenSnapshotIndex(b, m, "disk.img.fidx"); err != nil {
		t.Fatal(err)
	}
	// a verify state set on host 2 reaches host 1; host 1's own update
	// starts from the bucket's manifest and keeps it
	if err := h2.UpdateManifest(ctx, b, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "ok", UPID: "u2"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := h1.UpdateManifest(ctx, b, func(m *store.Manifest) error {
		if vs, ok := m.VerifyState(); !ok || vs.UPID != "u2" {
			return fmt.Errorf("host 1 updates a stale manifest: %+v", vs)
		}
		m.Unprotected["notes"] = []byte(`"from host 1"`)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	refresh(t, h2)
	if m, err := h2.ReadManifest(b); err != nil || string(m.Unprotected["notes"]) != `"from host 1"` {
		t.Fatalf("host 2 after the refresh: %v %s", err, m.Unprotected["notes"])
	}
	// protection
	if err := h1.SetProtected(ctx, a, true); err != nil {
		t.Fatal(err)
	}
	refresh(t, h2)
	if !h2.IsProtected(a) {
		t.Fatal("host 2 does not see the protection")
	}
	if err := h2.ForgetSnapshot(ctx, a); !errors.Is(err, store.ErrProtected) {
		t.Fatalf("forget of a protected snapshot: %v", err)
	}
	if err := h1.SetProtected(ctx, a, false); err != nil {
		t.Fatal(err)
	}
	refresh(t, h2)
	if h2.IsProtected(a) {
		t.Fatal("host 2 still sees the protection")
	}
	// forget on host 1: host 2 loses the snapshot, the bucket all of it
	if err := h1.ForgetSnapshot(ctx, a); err != nil {
		t.Fatal(err)
	}
	for _, err := range s3store.BucketOf(h1).List(ctx, a.String()+"/", "") {
		t.Fatalf("the bucket keeps objects of a forgotten snapshot (%v)", err)
	}
	refresh(t, h2)
	if _, err := os.Stat(h2.SnapshotPath(a)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("host 2 keeps the forgotten snapshot: %v", err)
	}
	if !finished(t, h2, b) {
		t.Fatal("host 2 lost the other snapshot")
	}
	// a whole group forgotten on host 2
	if _, err := h2.ForgetGroup(ctx, vm1); err != nil {
		t.Fatal(err)
	}
	refresh(t, h1)
	if snaps, _ := h1.Snapshots(vm1); len(snaps) != 0 {
		t.Fatalf("host 1 keeps %d snapshots of the forgotten group", len(snaps))
	}
	// the group's directory goes once it is no longer new (a backup of
	// the group starting here would have just made it)
	if groups, _ := h1.Groups(""); len(groups) != 1 {
		t.Fatalf("host 1 lost the group's directory while new: %v", groups)
	}
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(h1.GroupPath(vm1), old, old); err != nil {
		t.Fatal(err)
	}
	refresh(t, h1)
	if groups, err := h1.Groups(""); err != nil || len(groups) != 0 {
		t.Fatalf("host 1 keeps groups %v (%v) after the group was forgotten", groups, err)
	}
}

// Unfinished snapshots: one the bucket has (another host's backup under
// way) is mirrored, and removed once the bucket has nothing of it; one
// being written here, or left by a backup that died here, is kept.
func TestRemoteRefreshUnfinished(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	ctx := context.Background()
	b, err := s.StartBackup(ctx, vm1, at(1))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Abort()
	dead := store.Snapshot{Group: store.Group{Type: store.TypeVM, ID: "2"}, Time: at(1)}
	if err := os.MkdirAll(s.SnapshotPath(dead), 0o755); err != nil {
		t.Fatal(err)
	}
	elsewhere := store.Snapshot{Group: store.Group{Type: store.TypeCT, ID: "3"}, Time: at(2)}
	key := snapKey(elsewhere, "root.pxar.didx")
	if _, err := s3store.BucketOf(s).Put(ctx, key, objstore.Cond{}, []byte("partial")); err != nil {
		t.Fatal(err)
	}
	refresh(t, s)
	if _, err := os.Stat(filepath.Join(s.SnapshotPath(elsewhere), "root.pxar.didx")); err != nil {
		t.Fatalf("the bucket's unfinished snapshot is not mirrored: %v", err)
	}
	if err := s3store.BucketOf(s).Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	refresh(t, s)
	if _, err := os.Stat(s.SnapshotPath(elsewhere)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the mirror keeps an unfinished snapshot the bucket dropped: %v", err)
	}
	for _, dir := range []string{b.Dir(), s.SnapshotPath(dead)} {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("the refresh removed a local unfinished snapshot: %v", err)
		}
	}
}

// A snapshot written outside a Backup (as a tape restore writes one) is
// published by CommitManifest: its files, then its manifest, reach the
// bucket, and a refresh keeps it.
func TestRemoteCommitManifest(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	ctx := context.Background()
	a := backupAt(t, s, vm1, 1)
	m, err := s.ReadManifest(a)
	if err != nil {
		t.Fatal(err)
	}
	b := store.Snapshot{Group: vm1, Time: at(2)}
	if err := os.Mkdir(s.SnapshotPath(b), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Files {
		data, err := os.ReadFile(filepath.Join(s.SnapshotPath(a), f.Filename))
		if err == nil {
			err = os.WriteFile(filepath.Join(s.SnapshotPath(b), f.Filename), data, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	m.BackupTime = b.Time.Unix()
	js, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.SnapshotPath(b), ".manifest.tmp"), mustBlob(t, string(js)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitManifest(ctx, b, ".manifest.tmp"); err != nil {
		t.Fatal(err)
	}
	if !inBucket(t, s, snapKey(b, store.ManifestName)) || !inBucket(t, s, snapKey(b, "disk.img.fidx")) {
		t.Fatal("the committed snapshot is not in the bucket")
	}
	refresh(t, s)
	if !finished(t, s, b) {
		t.Fatal("the refresh removed the committed snapshot")
	}
}

// The files a host published are taken as up to date by its next
// refresh (their times are their objects'): nothing is downloaded again.
// A file changed in the bucket is.
func TestRemoteRefreshDownloadsOnlyChanges(t *testing.T) {
	h1, h2 := twoHosts(t)
	ctx := context.Background()
	snap := backupAt(t, h1, vm1, 1)
	ino := func(s *store.Store, name string) uint64 {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(s.SnapshotPath(snap), name), &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	names := []string{store.ManifestName, "disk.img.fidx", "notes.blob"}
	before := map[string]uint64{}
	for _, n := range names {
		before[n] = ino(h1, n)
	}
	refresh(t, h1)
	for _, n := range names {
		if ino(h1, n) != before[n] {
			t.Errorf("the refresh downloaded %s, which this host published", n)
		}
	}
	// a manifest update elsewhere is downloaded; the rest is not
	refresh(t, h2)
	if err := h2.UpdateManifest(ctx, snap, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: "ok", UPID: "x"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	refresh(t, h1)
	if ino(h1, store.ManifestName) == before[store.ManifestName] {
		t.Error("the refresh did not download the changed manifest")
	}
	if ino(h1, "disk.img.fidx") != before["disk.img.fidx"] {
		t.Error("the refresh downloaded an unchanged index")
	}
}

// A refresh beside forgets (objects deleted between its listing and its
// downloads) does not fail, and ends with the bucket's state.
func TestRemoteRefreshBesideForget(t *testing.T) {
	h1, h2 := twoHosts(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		var err error
		for ctx.Err() == nil && err == nil {
			err = h2.Refresh(ctx)
		}
		if ctx.Err() != nil {
			err = nil
		}
		errc <- err
	}()
	var last store.Snapshot
	for d := 1; d <= 12; d++ {
		snap := backupAt(t, h1, vm1, d)
		if d > 1 {
			if err := h1.ForgetSnapshot(context.Background(), last); err != nil {
				t.Fatal(err)
			}
		}
		last = snap
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("a refresh beside forgets: %v", err)
	}
	refresh(t, h2)
	snaps, err := h2.Snapshots(vm1)
	if err != nil || len(snaps) != 1 || !snaps[0].Time.Equal(last.Time) || !snaps[0].Finished {
		t.Fatalf("host 2 has %+v (%v), want only %s", snaps, err, last)
	}
}
