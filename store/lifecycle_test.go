package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
)

func day(d int) time.Time { return time.Date(2024, 6, d, 0, 0, 0, 0, time.UTC) }

func TestProtectAndForget(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeVM, ID: "100"}
	path, _ := makeImage(t, t.TempDir(), 1)
	a, _ := backupImage(t, s, g, day(1), path)
	b, _ := backupImage(t, s, g, day(2), path)

	if err := s.SetProtected(ctx, a, true); err != nil {
		t.Fatal(err)
	}
	if err := s.SetProtected(ctx, a, true); err != nil { // twice is fine
		t.Fatal(err)
	}
	snaps, _ := s.Snapshots(g)
	if !snaps[0].Protected || snaps[1].Protected {
		t.Fatalf("protected flags %+v", snaps)
	}
	if err := s.ForgetSnapshot(ctx, a); !errors.Is(err, ErrProtected) {
		t.Fatalf("forget protected: %v", err)
	}
	if _, err := os.Stat(s.SnapshotPath(a)); err != nil {
		t.Fatalf("protected snapshot gone: %v", err)
	}
	if err := s.SetProtected(ctx, a, false); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(ctx, a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("forget twice: %v", err)
	}
	if snaps, _ := s.Snapshots(g); len(snaps) != 1 || !snaps[0].Time.Equal(b.Time) {
		t.Fatalf("after forget: %+v", snaps)
	}
	if err := s.SetProtected(ctx, a, true); !errors.Is(err, ErrNotFound) {
		t.Fatalf("protect a forgotten snapshot: %v", err)
	}
	names, _ := fsutil.ReadNames(s.GroupPath(g))
	for _, n := range names {
		if strings.HasPrefix(n, trashPrefix) {
			t.Fatalf("trash left: %s", n)
		}
	}
}

func TestForgetRefusesLockedSnapshots(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeVM, ID: "101"}
	path, _ := makeImage(t, t.TempDir(), 2)
	prev, _ := backupImage(t, s, g, day(1), path)

	// a running backup holds its archive's reference and its own
	bk, err := s.StartBackup(ctx, g, day(2))
	if err != nil {
		t.Fatal(err)
	}
	if p, ok, err := bk.Reference(ctx, "disk.img"); err != nil || !ok || !p.Time.Equal(prev.Time) {
		t.Fatalf("reference %v %v %v", p, ok, err)
	}
	for _, snap := range []Snapshot{prev, bk.Snapshot()} {
		if err := s.ForgetSnapshot(ctx, snap); !errors.Is(err, ErrLocked) {
			t.Fatalf("forget %s during a backup: %v", snap, err)
		}
	}
	if _, err := s.ForgetGroup(ctx, g); !errors.Is(err, ErrLocked) {
		t.Fatalf("forget group during a backup: %v", err)
	}
	bk.Abort()

	// a reader's shared lock
	l, err := s.LockSnapshot(ctx, prev, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(ctx, prev); !errors.Is(err, ErrLocked) {
		t.Fatalf("forget a read snapshot: %v", err)
	}
	l.Unlock()
	if err := s.ForgetSnapshot(ctx, prev); err != nil {
		t.Fatal(err)
	}
}

func TestForgetGroup(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{NS: "prod", Type: TypeCT, ID: "7"}
	if err := os.MkdirAll(filepath.Join(s.root, "ns", "prod"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, _ := makeImage(t, t.TempDir(), 3)
	a, _ := backupImage(t, s, g, day(1), path)
	backupImage(t, s, g, day(2), path)
	if err := s.SetProtected(ctx, a, true); err != nil {
		t.Fatal(err)
	}
	removed, err := s.ForgetGroup(ctx, g)
	if !errors.Is(err, ErrProtected) || len(removed) != 1 {
		t.Fatalf("forget group with a protected snapshot: %v %v", removed, err)
	}
	if snaps, _ := s.Snapshots(g); len(snaps) != 1 || !snaps[0].Protected {
		t.Fatalf("left %+v", snaps)
	}
	s.SetProtected(ctx, a, false)
	if removed, err := s.ForgetGroup(ctx, g); err != nil || len(removed) != 1 {
		t.Fatalf("forget group: %v %v", removed, err)
	}
	if _, err := os.Lstat(s.GroupPath(g)); !os.IsNotExist(err) {
		t.Fatalf("group directory left: %v", err)
	}
	if _, err := s.ForgetGroup(ctx, g); !errors.Is(err, ErrNotFound) {
		t.Fatalf("forget a missing group: %v", err)
	}
	// a new backup of the group starts afresh
	backupImage(t, s, g, day(3), path)
}

func TestForgetNeverFollowsSymlinks(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeHost, ID: "h"}
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(s.GroupPath(g), 0o755); err != nil {
		t.Fatal(err)
	}
	snap := Snapshot{Group: g, Time: day(5)}
	if err := os.Symlink(outside, s.SnapshotPath(snap)); err != nil {
		t.Fatal(err)
	}
	if err := s.ForgetSnapshot(ctx, snap); !errors.Is(err, ErrBadName) {
		t.Fatalf("forget a symlinked snapshot: %v", err)
	}
	if err := s.SetProtected(ctx, snap, true); err == nil {
		t.Fatal("protect through a symlink")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("file outside the store touched: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, ProtectedName)); err == nil {
		t.Fatal("marker written outside the store")
	}
}

func TestCleanTrash(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeVM, ID: "9"}
	path, _ := makeImage(t, t.TempDir(), 4)
	snap, _ := backupImage(t, s, g, day(1), path)
	// a forget killed after its rename
	trash := filepath.Join(s.GroupPath(g), trashPrefix+"x")
	if err := os.Rename(s.SnapshotPath(snap), trash); err != nil {
		t.Fatal(err)
	}
	// one still being removed (locked) stays
	busy := filepath.Join(s.GroupPath(g), trashPrefix+"busy")
	os.Mkdir(busy, 0o755)
	f, _ := openDirNoFollow(busy)
	l, err := flockFile(ctx, f, true, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if snaps, _ := s.Snapshots(g); len(snaps) != 0 {
		t.Fatalf("trash listed as a snapshot: %+v", snaps)
	}
	n, err := s.CleanTrash(ctx)
	if err != nil || n != 1 {
		t.Fatalf("clean trash: %d %v", n, err)
	}
	if _, err := os.Lstat(trash); !os.IsNotExist(err) {
		t.Fatal("trash left")
	}
	if _, err := os.Lstat(busy); err != nil {
		t.Fatal("locked trash removed")
	}
	l.Unlock()
	if n, _ := s.CleanTrash(ctx); n != 1 {
		t.Fatalf("second clean removed %d", n)
	}
}

func TestOldestWriter(t *testing.T) {
	s := testStore(t)
	if _, ok, err := s.OldestWriter(); ok || err != nil {
		t.Fatalf("no writers: %v %v", ok, err)
	}
	w1, err := s.RegisterWriter()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond)
	w2, err := s.RegisterWriter()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(s.root, writersDir)
	// a dead writer's file (no lock) older than both, and junk
	dead := filepath.Join(dir, "1000-1-dead")
	os.WriteFile(dead, nil, 0o600)
	os.WriteFile(filepath.Join(dir, "junk"), nil, 0o600)
	os.Symlink("/etc/passwd", filepath.Join(dir, "2000-1-link"))
	os.Mkdir(filepath.Join(dir, "3000-1-dir"), 0o700)
	got, ok, err := s.OldestWriter()
	if err != nil || !ok || got.UnixNano() != w1.Start().UnixNano() {
		t.Fatalf("oldest %v %v %v, want %v", got, ok, err, w1.Start())
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Fatal("dead writer's file kept")
	}
	w1.Done()
	w1.Done()
	if got, _, _ := s.OldestWriter(); got.UnixNano() != w2.Start().UnixNano() {
		t.Fatalf("after the first ended: %v, want %v", got, w2.Start())
	}
	w2.Done()
	if _, ok, _ := s.OldestWriter(); ok {
		t.Fatal("writers left")
	}
	// a backup is a writer while it runs
	g := Group{Type: TypeVM, ID: "w"}
	b, err := s.StartBackup(context.Background(), g, day(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.OldestWriter(); !ok {
		t.Fatal("running backup not registered")
	}
	b.Abort()
	if _, ok, _ := s.OldestWriter(); ok {
		t.Fatal("aborted backup still registered")
	}
}

// TestForgetNeverLeavesTheStore: a group, type or namespace directory
// that is a symlink to a tree outside the store is refused by forget,
// forget of the group and protect; nothing outside is touched.
func TestForgetNeverLeavesTheStore(t *testing.T) {
	ctx := context.Background()
	for _, link := range []string{"group", "type", "ns"} {
		t.Run(link, func(t *testing.T) {
			s := testStore(t)
			g := Group{NS: "a", Type: TypeHost, ID: "h"}
			snap := Snapshot{Group: g, Time: day(5)}
			outside := t.TempDir()
			// what the symlink leads to looks like the store's tree
			var at, target string
			switch link {
			case "group":
				at, target = s.GroupPath(g), outside
			case "type":
				at, target = filepath.Join(s.root, "ns", "a", TypeHost), outside
			case "ns":
				at, target = filepath.Join(s.root, "ns", "a"), outside
			}
			inner := strings.TrimPrefix(s.SnapshotPath(snap), at)
			victim := filepath.Join(target, inner)
			if err := os.MkdirAll(victim, 0o755); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(victim, ManifestName), []byte("x"), 0o644)
			if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, at); err != nil {
				t.Fatal(err)
			}
			if err := s.ForgetSnapshot(ctx, snap); !errors.Is(err, ErrBadName) {
				t.Errorf("forget through a symlinked %s: %v", link, err)
			}
			if _, err := s.ForgetGroup(ctx, g); !errors.Is(err, ErrBadName) {
				t.Errorf("forget group through a symlinked %s: %v", link, err)
			}
			if err := s.SetProtected(ctx, snap, true); !errors.Is(err, ErrBadName) {
				t.Errorf("protect through a symlinked %s: %v", link, err)
			}
			if _, err := os.Stat(filepath.Join(victim, ManifestName)); err != nil {
				t.Errorf("outside the store: %v", err)
			}
			if _, err := os.Lstat(filepath.Join(victim, ProtectedName)); err == nil {
				t.Error("marker written outside the store")
			}
		})
	}
}

// TestCanForget judges as ForgetSnapshot would, and removes nothing.
func TestCanForget(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeVM, ID: "can"}
	path, _ := makeImage(t, t.TempDir(), 5)
	a, _ := backupImage(t, s, g, day(1), path)
	b, _ := backupImage(t, s, g, day(2), path)
	s.SetProtected(ctx, a, true)
	l, err := s.LockSnapshot(ctx, b, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CanForget(ctx, a); !errors.Is(err, ErrProtected) {
		t.Errorf("protected: %v", err)
	}
	if err := s.CanForget(ctx, b); !errors.Is(err, ErrLocked) {
		t.Errorf("locked: %v", err)
	}
	if err := s.CanForget(ctx, Snapshot{Group: g, Time: day(3)}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	l.Unlock()
	if err := s.CanForget(ctx, b); err != nil {
		t.Errorf("free: %v", err)
	}
	if snaps, _ := s.Snapshots(g); len(snaps) != 2 {
		t.Errorf("CanForget removed something: %+v", snaps)
	}
}

// TestLockSnapshotRemovedWhileWaiting: a reader that waits for the lock
// of a snapshot being removed gets ErrNotFound, not a lock on the
// removed directory.
func TestLockSnapshotRemovedWhileWaiting(t *testing.T) {
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeVM, ID: "wait"}
	path, _ := makeImage(t, t.TempDir(), 6)
	snap, _ := backupImage(t, s, g, day(1), path)
	removal, err := s.LockSnapshot(ctx, snap, true)
	if err != nil {
		t.Fatal(err)
	}
	s.SetLockWait(time.Minute)
	done := make(chan error, 1)
	go func() {
		l, err := s.LockSnapshot(ctx, snap, false)
		l.Unlock()
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the reader is waiting (if not yet, it finds the snapshot gone at once)
	if err := os.Rename(s.SnapshotPath(snap), filepath.Join(s.GroupPath(g), trashPrefix+"w")); err != nil {
		t.Fatal(err)
	}
	removal.Unlock()
	if err := <-done; !errors.Is(err, ErrNotFound) {
		t.Fatalf("reader after the removal: %v, want ErrNotFound", err)
	}
}
