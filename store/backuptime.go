package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrBadTime is a snapshot time a new backup may not have.
var ErrBadTime = errors.New("bad snapshot time")

// MaxFutureTime is how far ahead of the clock a backup's time may be: a
// snapshot far in the future would stay the group's newest ("latest")
// and refuse every backup after it.
const MaxFutureTime = 24 * time.Hour

// MinBackupTime is the oldest time a snapshot may have: PBS's
// BACKUP_TIME_SCHEMA minimum (pbs-api-types, 1547797308). A zero time,
// the epoch and every time before it are older.
var MinBackupTime = time.Unix(1547797308, 0).UTC()

// CheckBackupTime refuses a time a new backup may not be given: one
// before MinBackupTime (the zero time included, which StartBackup would
// take as "now") or more than MaxFutureTime ahead of the clock.
func CheckBackupTime(t time.Time) error {
	if t.Before(MinBackupTime) {
		return fmt.Errorf("%w: %s is before %s, the oldest time PBS takes", ErrBadTime,
			t.UTC().Format(time.RFC3339), MinBackupTime.Format(time.RFC3339))
	}
	if limit := time.Now().Add(MaxFutureTime); t.After(limit) {
		return fmt.Errorf("%w: %s is more than %s in the future", ErrBadTime, t.UTC().Format(time.RFC3339), MaxFutureTime)
	}
	return nil
}

// backupTime is the snapshot of a new backup of g at t (now when zero),
// under the group's lock: newer than every snapshot of the group,
// finished or not. A defaulted time that falls in the second of the
// group's newest snapshot (two backups within one second) waits for the
// next second.
func (s *Store) backupTime(ctx context.Context, g Group, t time.Time) (Snapshot, error) {
	given := !t.IsZero()
	if !given {
		t = time.Now()
	}
	snap := Snapshot{Group: g, Time: t.UTC().Truncate(time.Second)}
	snaps, err := s.Snapshots(g)
	if err != nil || len(snaps) == 0 {
		return snap, nil // a new group
	}
	newest := snaps[len(snaps)-1].Snapshot
	switch {
	case snap.Time.After(newest.Time):
		return snap, nil
	case snap.Time.Equal(newest.Time) && given:
		return snap, fmt.Errorf("snapshot %s: %w", snap, ErrExists)
	case given:
		return snap, fmt.Errorf("%w: %s is not newer than the group's newest snapshot %s", ErrBadTime, snap.Time.Format(time.RFC3339), newest)
	case newest.Time.Sub(snap.Time) > 0:
		return snap, fmt.Errorf("%w: the group's newest snapshot %s is newer than the clock (%s): was the clock set back, or a time given?",
			ErrBadTime, newest, snap.Time.Format(time.RFC3339))
	}
	next := newest.Time.Add(time.Second)
	wait := time.NewTimer(time.Until(next))
	defer wait.Stop()
	select {
	case <-ctx.Done():
		return snap, ctx.Err()
	case <-wait.C:
	}
	snap.Time = next
	return snap, nil
}
