package store

import (
	"errors"
	"testing"
	"time"
)

// TestBackupTime: a new snapshot's time must be newer than the group's
// newest snapshot, finished or not, and at most a day ahead of the clock;
// a defaulted time in the newest snapshot's second takes the next one.
func TestBackupTime(t *testing.T) {
	s := testStore(t)
	g := Group{Type: TypeHost, ID: "times"}
	now := time.Now().UTC().Truncate(time.Second)
	start := func(at time.Time) (Snapshot, error) {
		b, err := s.StartBackup(t.Context(), g, at)
		if err != nil {
			return Snapshot{}, err
		}
		b.unlock() // left unfinished: it counts all the same
		return b.Snapshot(), nil
	}
	for _, at := range []time.Time{
		time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC),
		now.Add(MaxFutureTime + time.Minute),
		now.Add(100 * 365 * 24 * time.Hour),
	} {
		if _, err := start(at); !errors.Is(err, ErrBadTime) {
			t.Errorf("backup at %s: %v, want ErrBadTime", at, err)
		}
	}
	if snaps, _ := s.Snapshots(g); len(snaps) != 0 {
		t.Fatalf("refused backups left snapshots: %v", snaps)
	}
	first := now.Add(-time.Hour)
	if _, err := start(first); err != nil {
		t.Fatal(err)
	}
	if _, err := start(first); !errors.Is(err, ErrExists) {
		t.Errorf("same time again: %v, want ErrExists", err)
	}
	for _, at := range []time.Time{first.Add(-time.Second), first.Add(-48 * time.Hour), time.Unix(0, 0)} {
		if _, err := start(at); !errors.Is(err, ErrBadTime) {
			t.Errorf("backup at %s, before the newest (unfinished) %s: %v, want ErrBadTime", at, first, err)
		}
	}
	ahead := now.Add(MaxFutureTime - time.Hour) // allowed, and now the newest
	if _, err := start(ahead); err != nil {
		t.Fatalf("backup %s ahead: %v", ahead.Sub(now), err)
	}
	if _, err := start(time.Time{}); !errors.Is(err, ErrBadTime) {
		t.Errorf("default time behind the newest snapshot: %v, want ErrBadTime", err)
	}

	// Two default-time backups within one second: the second waits for
	// the next second.
	g = Group{Type: TypeHost, ID: "same-second"}
	a, err := start(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := start(time.Time{})
	if err != nil || !b.Time.After(a.Time) {
		t.Errorf("second default-time backup: %v at %s, after %s", err, b.Time, a.Time)
	}
}
