package storesync

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// syncGroup copies one group's snapshots, oldest first. A snapshot that
// fails ends the group: a later one copied after it would leave it
// older than the target's newest, never to be copied.
func (s *Syncer) syncGroup(ctx context.Context, gp *groupPlan) {
	if len(gp.snaps) == 0 {
		return
	}
	if err := s.to.CheckGroupDirs(gp.g); err != nil && !errors.Is(err, store.ErrNotFound) {
		s.obs.Errorf("target: %v: group not synced", err)
		return
	}
	have, newest, err := s.targetState(gp.g)
	if err != nil {
		s.obs.Errorf("target: group %s: %v: not synced", gp.g, err)
		return
	}
	for i, snap := range gp.snaps {
		res := s.syncSnapshot(ctx, snap, have, newest)
		if ctx.Err() != nil {
			return // cancelled: unreported
		}
		s.record(res)
		s.obs.AddDone(1, 0)
		switch res.Outcome {
		case Copied:
			newest = snap.Time
			s.obs.Logf("%s: copied", snap)
		case Failed:
			s.obs.Errorf("%s: %s", snap, res.Error)
			if left := len(gp.snaps) - i - 1; left > 0 {
				s.obs.Logf("group %s: %d newer snapshot(s) left for the next sync", gp.g, left)
			}
			return
		default:
			s.obs.Logf("%s: skipped, %s", snap, res.Outcome)
		}
	}
}

// targetState lists the target group: finished (true) or not by time,
// and its newest finished snapshot's time (zero when none).
func (s *Syncer) targetState(g store.Group) (map[int64]bool, time.Time, error) {
	have := map[int64]bool{}
	var newest time.Time
	infos, err := s.to.Snapshots(g)
	if errors.Is(err, store.ErrNotFound) {
		return have, newest, nil
	}
	if err != nil {
		return nil, newest, err
	}
	for _, si := range infos {
		have[si.Time.Unix()] = si.Finished
		if si.Finished {
			newest = si.Time
		}
	}
	return have, newest, nil
}

// syncSnapshot decides about one snapshot and copies it when it is to be.
func (s *Syncer) syncSnapshot(ctx context.Context, snap store.Snapshot, have map[int64]bool, newest time.Time) SnapshotResult {
	res := SnapshotResult{Snapshot: snap.String()}
	finished, found := have[snap.Time.Unix()]
	switch {
	case finished:
		res.Outcome = Exists
		return res
	case found:
		if err := s.removeLeftover(ctx, snap); err != nil {
			res.Outcome, res.Error = Failed, fmt.Sprintf("an unfinished snapshot is in the way in the target: %v", err)
			return res
		}
	case !snap.Time.After(newest):
		res.Outcome = Older
		return res
	}
	err := s.copySnapshot(ctx, snap)
	switch {
	case err == nil:
		res.Outcome = Copied
	case errors.Is(err, store.ErrBadTime):
		res.Outcome = Older // a newer snapshot appeared in the target (a backup running)
	case errors.Is(err, store.ErrExists):
		res.Outcome = Exists
	default:
		res.Outcome, res.Error = Failed, err.Error()
	}
	return res
}

// removeLeftover removes the target's unfinished snapshot at snap's
// time: the leftover of a copy or a backup cut short. It holds the
// group's backup lock meanwhile, so no backup of the group (on any host
// of a remote store) is running, and the snapshot's own lock keeps one
// this process writes.
func (s *Syncer) removeLeftover(ctx context.Context, snap store.Snapshot) error {
	gl, err := s.to.LockGroup(ctx, snap.Group)
	if err != nil {
		return err
	}
	defer gl.Unlock()
	if _, err := s.to.ReadManifest(snap); err == nil {
		return nil // finished meanwhile: StartBackup says it exists
	}
	err = s.to.ForgetSnapshot(ctx, snap)
	if err == nil {
		s.obs.Logf("%s: removed the unfinished snapshot the target had", snap)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// copySnapshot rebuilds snap in the target as a backup at its time:
// chunks and index files, blobs (in its turn to upload: pipeline.go),
// then the manifest last. Anything short
// of the manifest is aborted (the unfinished snapshot removed).
func (s *Syncer) copySnapshot(ctx context.Context, snap store.Snapshot) (err error) {
	l, err := s.from.LockSnapshot(ctx, snap, false) // no one removes it while it is read
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer l.Unlock()
	m, err := s.from.ReadManifest(snap)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	release, err := s.startUploads(ctx)
	defer release()
	if err != nil {
		return err
	}
	b, err := s.to.StartBackup(ctx, snap.Group, snap.Time)
	if err != nil {
		return fmt.Errorf("target: %w", err)
	}
	finished := false
	defer func() {
		if !finished {
			b.Abort()
		}
	}()
	b.SetManifestBase(m)
	filter := new(store.TouchFilter)
	for _, fi := range m.Files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := s.copyFile(ctx, b, snap, m, fi, filter); err != nil {
			return err
		}
	}
	release() // the next snapshot's uploads may run while this one finishes
	if s.beforeFinish != nil {
		s.beforeFinish(snap)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := b.Finish(); err != nil {
		return fmt.Errorf("target: %w", err)
	}
	finished = true
	return nil
}

// copyFile copies one file of the manifest: an index with its chunks,
// or a blob.
func (s *Syncer) copyFile(ctx context.Context, b *store.Backup, snap store.Snapshot, m *store.Manifest,
	fi store.FileInfo, filter *store.TouchFilter) error {
	if _, ok := index.Kind(fi.Filename); ok {
		x, err := s.from.OpenCheckedIndex(snap, m, fi.Filename)
		if err != nil {
			return fmt.Errorf("source: %w", err)
		}
		defer x.Close()
		known, err := b.KnownChunks(ctx, fi.Filename)
		if err != nil {
			return err
		}
		if err := s.copyChunks(ctx, x, fi, known, filter); err != nil {
			return err
		}
		s.dataBytes.Add(x.Size())
		return b.AddIndexCopy(x, fi)
	}
	if !strings.HasSuffix(fi.Filename, ".blob") {
		return fmt.Errorf("source: snapshot %s: %s: %w: neither an index nor a blob", snap, fi.Filename, store.ErrBadName)
	}
	blob, err := s.from.ReadBlobFile(snap, m, fi.Filename)
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	return b.AddBlobCopy(blob, fi)
}
