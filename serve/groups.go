package serve

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/serve/runlog"
	"github.com/cairnfs/cairn/store"
)

// StaleRepeat is how often a group that stays stale is reported again.
const StaleRepeat = 24 * time.Hour

// groupState is what the daemon knows of a group: its record, whether
// it is watched, and whether (and when last) it was reported stale.
type groupState struct {
	runlog.Group
	watched  bool
	stale    bool
	notified time.Time
}

// CheckStale reads the newest finished snapshot of each watched group
// and tells the notifier of a group that went stale (again every
// StaleRepeat while it stays so) and of one fresh again. The loop calls
// it every StaleEvery; it reads the time from Options.Now.
func (d *Daemon) CheckStale(ctx context.Context) {
	d.mu.Lock()
	var watched []runlog.Group
	for _, g := range d.groups {
		if g.watched {
			watched = append(watched, g.Group)
		}
	}
	d.mu.Unlock()
	type event struct {
		kind    runlog.EventKind
		g       runlog.Group
		summary string
	}
	var events []event
	for _, g := range watched {
		if ctx.Err() != nil {
			return
		}
		newest, err := d.newest(g)
		if err != nil {
			d.opt.Logger.Error("staleness not checked", "group", g.Name(), "err", err)
			continue
		}
		now := d.opt.Now()
		d.mu.Lock()
		st := d.groups[g.Name()]
		if st == nil || !st.watched { // reloaded meanwhile
			d.mu.Unlock()
			continue
		}
		st.Newest = newest
		switch {
		case st.Stale(now) && (!st.stale || now.Sub(st.notified) >= StaleRepeat):
			st.stale, st.notified = true, now
			events = append(events, event{runlog.EventStale, st.Group, staleSummary(st.Group, now)})
		case !st.Stale(now) && st.stale:
			st.stale, st.notified = false, time.Time{}
			events = append(events, event{runlog.EventFresh, st.Group, fmt.Sprintf("group %s is fresh again: newest snapshot %s",
				st.Name(), newest.UTC().Format(time.RFC3339))})
		}
		d.mu.Unlock()
	}
	for _, ev := range events {
		d.emit(ev.kind, nil, &ev.g, ev.summary)
	}
}

// newest is the time of g's newest finished snapshot (zero: none).
func (d *Daemon) newest(g runlog.Group) (time.Time, error) {
	snap, err := d.opt.Store.Latest(store.Group{NS: store.NS(g.Namespace), Type: g.Type, ID: g.ID})
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, nil
	}
	return snap.Time, err
}

func staleSummary(g runlog.Group, now time.Time) string {
	if g.Newest.IsZero() {
		return fmt.Sprintf("group %s is stale: no finished snapshot (wanted one newer than %s)", g.Name(), g.MaxAge)
	}
	return fmt.Sprintf("group %s is stale: newest snapshot %s is %s old (at most %s wanted)", g.Name(),
		g.Newest.UTC().Format(time.RFC3339), now.Sub(g.Newest).Truncate(time.Second), g.MaxAge)
}

// sample walks the store's snapshots once (two stats each) for the
// groups' newest snapshots and the snapshot count, reads the manifest of
// a group's newest snapshot when it is not the one read before (its
// size), takes
// the store's stored bytes, chunks and logical bytes from the last GC's
// status (one small file: no walk of the chunks), and adds the sample to
// the history.
func (d *Daemon) sample(ctx context.Context) {
	found := map[string]*runlog.Group{}
	newest := map[string]store.Snapshot{}
	var snaps int64
	for si, err := range d.opt.Store.Walk(ctx, store.Selector{}) {
		if err != nil {
			d.opt.Logger.Warn("store walk", "err", err)
			continue
		}
		if !si.Finished {
			continue
		}
		snaps++
		g := runlog.Group{Namespace: string(si.Group.NS), Type: si.Group.Type, ID: si.Group.ID}
		if found[g.Name()] == nil {
			found[g.Name()] = &g
		}
		f := found[g.Name()]
		f.Snapshots++
		if si.Time.After(f.Newest) {
			f.Newest = si.Time
			newest[g.Name()] = si.Snapshot
		}
	}
	if ctx.Err() != nil {
		return
	}
	d.sizeNewest(found, newest)
	s := runlog.Sample{Time: d.opt.Now(), Snapshots: snaps}
	rep, ok, err := gc.ReadStatus(d.opt.Store)
	if err != nil {
		d.opt.Logger.Warn("store size unknown", "err", err)
	}
	if ok {
		s.StoredBytes, s.Chunks, s.LogicalBytes = rep.DiskBytes, rep.DiskChunks, rep.IndexDataBytes
	}
	if err := d.history.Add(s); err != nil {
		d.opt.Logger.Error("history not written", "err", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.current = s
	if ok {
		d.lastGC = rep.Ended
	}
	d.mergeGroups(found)
}

// mergeGroups takes the groups a walk found: watched groups keep their
// age and staleness, groups no longer found and not watched go. d.mu is
// held.
func (d *Daemon) mergeGroups(found map[string]*runlog.Group) {
	for name, st := range d.groups {
		if f := found[name]; f != nil {
			st.Newest, st.Snapshots, st.Bytes = f.Newest, f.Snapshots, f.Bytes
		} else if !st.watched {
			delete(d.groups, name)
		} else {
			st.Newest, st.Snapshots, st.Bytes = time.Time{}, 0, 0
		}
	}
	for name, f := range found {
		if d.groups[name] == nil {
			d.groups[name] = &groupState{Group: *f}
		}
	}
}

// sortGroups sorts groups by name.
func sortGroups(gs []runlog.Group) {
	slices.SortFunc(gs, func(a, b runlog.Group) int { return strings.Compare(a.Name(), b.Name()) })
}

// sizeNewest sets each found group's Bytes: the logical size of its
// newest snapshot (the sum of its manifest's file sizes, which for an
// index is the size of the data it describes). A manifest is read only
// when the group's newest snapshot is not the one sized before, so an
// idle store costs no read.
func (d *Daemon) sizeNewest(found map[string]*runlog.Group, newest map[string]store.Snapshot) {
	d.mu.Lock()
	known := map[string]runlog.Group{}
	for name, st := range d.groups {
		known[name] = st.Group
	}
	d.mu.Unlock()
	for name, f := range found {
		if k, ok := known[name]; ok && k.Newest.Equal(f.Newest) && k.Bytes > 0 {
			f.Bytes = k.Bytes
			continue
		}
		m, err := d.opt.Store.ReadManifest(newest[name])
		if err != nil {
			d.opt.Logger.Warn("snapshot size unknown", "snapshot", newest[name].String(), "err", err)
			continue
		}
		for _, fi := range m.Files {
			f.Bytes = min(f.Bytes+int64(min(fi.Size, 1<<60)), 1<<62) // hostile sizes saturate
		}
	}
}
