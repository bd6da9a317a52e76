package prune

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

var day0 = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)

func newManager(t *testing.T, s *store.Store) *jobs.Manager {
	t.Helper()
	m := jobs.NewManager(context.Background(), s, nil)
	if err := m.Register(Kind{Location: time.UTC}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// runPrune runs one prune job from a control line to its end.
func runPrune(t *testing.T, m *jobs.Manager, line string) (jobs.Status, Report) {
	st, rep, _ := runPruneLog(t, m, line)
	return st, rep
}

// runPruneLog is runPrune that returns the job's log too.
func runPruneLog(t *testing.T, m *jobs.Manager, line string) (jobs.Status, Report, string) {
	t.Helper()
	j, err := m.Control("prune", line)
	if err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	st, err := m.Wait(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	rep, ok := st.Result.(Report)
	if !ok {
		t.Fatalf("result %T", st.Result)
	}
	return st, rep, strings.Join(j.Log(), "\n")
}

// backups makes finished snapshots of g, one a day at 10:00 UTC from
// day0, and returns them oldest first.
func backups(t *testing.T, s *store.Store, g store.Group, days int) []store.Snapshot {
	t.Helper()
	var out []store.Snapshot
	for i := range days {
		data := storetest.RandBytes(fmt.Sprintf("%s-%d", g, i), 16<<10)
		out = append(out, storetest.BackupImage(t, s, g, day0.AddDate(0, 0, i), storetest.Image{Data: data}))
	}
	return out
}

// unfinished makes the directory a killed backup leaves: no manifest.
func unfinished(t *testing.T, s *store.Store, g store.Group, at time.Time) store.Snapshot {
	t.Helper()
	snap := store.Snapshot{Group: g, Time: at}
	dir := s.SnapshotPath(snap)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "disk.img.tmp_fidx"), []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	return snap
}

func exists(t *testing.T, s *store.Store, snap store.Snapshot) bool {
	_, err := os.Lstat(s.SnapshotPath(snap))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// left returns the snapshot directories of g, oldest first.
func left(t *testing.T, s *store.Store, g store.Group) []string {
	t.Helper()
	infos, err := s.Snapshots(g)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, si := range infos {
		out = append(out, si.TimeString())
	}
	return out
}

func TestPruneJobRemovesWhatThePlanSays(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{NS: "a", Type: store.TypeVM, ID: "100"}
	snaps := backups(t, s, g, 6) // days 0..5
	if err := s.SetProtected(t.Context(), snaps[1], true); err != nil {
		t.Fatal(err)
	}
	old := unfinished(t, s, g, day0.Add(time.Hour))   // older than finished ones: remove
	top := unfinished(t, s, g, day0.AddDate(0, 0, 6)) // newest: keep-partial
	st, rep := runPrune(t, newManager(t, s), "start group=ns/a/vm/100 keep-last=1 keep-daily=2")
	if st.State != jobs.StateOK {
		t.Fatalf("state %s: %v", st.State, st.Errors)
	}
	// keep-partial day 6; keep-last day 5; keep-daily days 4, 3;
	// day 1 protected; days 0, 2 and the old unfinished one removed.
	want := []string{snaps[1].TimeString(), snaps[3].TimeString(), snaps[4].TimeString(), snaps[5].TimeString(), top.TimeString()}
	if got := left(t, s, g); !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if exists(t, s, old) {
		t.Error("older unfinished snapshot not removed")
	}
	if rep.Marks != (Counts{Keep: 3, KeepPartial: 1, Protected: 1, Remove: 3}) || rep.Removed != 3 || rep.Skipped+rep.Failed != 0 || rep.Groups != 1 {
		t.Errorf("report %+v", rep)
	}
	// Oldest first, as removed.
	if len(rep.Snapshots) != 8 || rep.Snapshots[0].Snapshot != snaps[0].String() || !rep.Snapshots[0].Removed ||
		rep.Snapshots[7].Mark != KeepPartial || rep.Snapshots[2].Mark != Protected {
		t.Errorf("snapshots %+v", rep.Snapshots)
	}
}

func TestPruneJobSkipsLockedAndProtected(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{Type: store.TypeCT, ID: "web"}
	snaps := backups(t, s, g, 5)
	// A reader (verify, tape export, a backup's previous snapshot)
	// holds day 1.
	l, err := s.LockSnapshot(t.Context(), snaps[1], false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	st, rep, log := runPruneLog(t, newManager(t, s), "start group=ct/web keep-last=1")
	if st.State != jobs.StateOK || st.ErrorCount != 0 {
		t.Fatalf("a locked snapshot failed the job: %s %v", st.State, st.Errors)
	}
	if got, want := left(t, s, g), []string{snaps[1].TimeString(), snaps[4].TimeString()}; !slices.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if rep.Removed != 3 || rep.Skipped != 1 || rep.Snapshots[1].Skipped != "locked" {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(log, "remove "+snaps[1].String()+": skipped, it is in use") {
		t.Errorf("log does not say why %s stayed:\n%s", snaps[1], log)
	}
	l.Unlock()

	// Protected after planning is the same as locked: ForgetSnapshot
	// refuses it. Here the plan already sees it.
	if err := s.SetProtected(t.Context(), snaps[1], true); err != nil {
		t.Fatal(err)
	}
	_, rep = runPrune(t, newManager(t, s), "start group=ct/web keep-last=1")
	if rep.Marks.Protected != 1 || rep.Removed != 0 || !exists(t, s, snaps[1]) {
		t.Errorf("protected: %+v", rep)
	}
}

// storeTree describes every file and directory under root: path, mode,
// size, modification time and content hash of files. It leaves out the
// job framework's lock file of the prune kind, which every job run
// writes (who holds it), dry or not, and so the store root's mtime when
// that file is first made.
func storeTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		switch rel {
		case ".job-prune.lck":
			return nil
		case ".":
			fmt.Fprintf(&b, ". %v\n", fi.Mode())
			return nil
		}
		fmt.Fprintf(&b, "%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPruneJobDryRunChangesNothing(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{Type: store.TypeVM, ID: "1"}
	snaps := backups(t, s, g, 4)
	unfinished(t, s, g, day0.Add(time.Hour))
	before := storeTree(t, s.Root())
	st, rep, log := runPruneLog(t, newManager(t, s), "start all=1 keep-last=1 dry-run=1")
	if st.State != jobs.StateOK {
		t.Fatalf("state %s %v", st.State, st.Errors)
	}
	if after := storeTree(t, s.Root()); after != before {
		t.Errorf("dry run changed the store:\n%s", lineDiff(before, after))
	}
	if !rep.DryRun || rep.Marks.Remove != 4 || rep.Removed != 0 || !strings.Contains(log, "would remove "+snaps[0].String()) {
		t.Errorf("report %+v\n%s", rep, log)
	}
}

func TestPruneJobAllNamespaces(t *testing.T) {
	s := storetest.NewStore(t)
	groups := []store.Group{{Type: store.TypeVM, ID: "1"}, {NS: "x", Type: store.TypeVM, ID: "1"},
		{NS: "x/y", Type: store.TypeHost, ID: "h"}, {NS: "z", Type: store.TypeCT, ID: "1"}}
	for _, g := range groups {
		backups(t, s, g, 3)
	}
	st, rep := runPrune(t, newManager(t, s), "start all ns=x keep-last=2")
	if st.State != jobs.StateOK || rep.Groups != 2 || rep.Removed != 2 {
		t.Fatalf("%s %v %+v", st.State, st.Errors, rep)
	}
	for i, g := range groups {
		want := 3
		if i == 1 || i == 2 {
			want = 2
		}
		if n := len(left(t, s, g)); n != want {
			t.Errorf("%s: %d snapshots left, want %d", g, n, want)
		}
	}
	// No keep option: nothing removed, whatever is there.
	unfinished(t, s, groups[0], day0.Add(time.Hour))
	st, rep, log := runPruneLog(t, newManager(t, s), "start all")
	if st.State != jobs.StateOK || rep.Groups != 4 || rep.Removed != 0 || rep.Marks.Remove != 0 ||
		!strings.Contains(log, "keep all") {
		t.Errorf("keep all: %s %+v\n%s", st.State, rep, log)
	}
	if n := len(left(t, s, groups[0])); n != 4 {
		t.Errorf("keep all removed something: %d left", n)
	}
}

func TestPruneJobErrors(t *testing.T) {
	s := storetest.NewStore(t)
	backups(t, s, store.Group{Type: store.TypeVM, ID: "1"}, 2)
	m := newManager(t, s)
	for _, c := range []struct{ line, want string }{
		{"start group=vm/404 keep-last=1", "vm/404"},
		{"start all ns=nowhere keep-last=1", "nowhere"},
	} {
		st, _ := runPrune(t, m, c.line)
		if st.State != jobs.StateFailed || len(st.Errors) == 0 || !strings.Contains(st.Errors[0], c.want) {
			t.Errorf("%q: %s %v", c.line, st.State, st.Errors)
		}
	}
	for _, line := range []string{"start group=vm/1 keep-last=-1", "start keep-last=1", "start group=vm/1 keep-daily=1e9"} {
		if _, err := m.Control("prune", line); !errors.Is(err, jobs.ErrBadParam) {
			t.Errorf("%q: %v", line, err)
		}
	}
	// A group directory that is a symlink is not followed: of two
	// unfinished snapshots there the older one would be removed.
	target := t.TempDir()
	for _, at := range []time.Time{day0, day0.Add(time.Hour)} {
		if err := os.MkdirAll(filepath.Join(target, at.Format(store.TimeFormat)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target, s.GroupPath(store.Group{Type: store.TypeVM, ID: "link"})); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"start group=vm/link keep-last=1", "start all keep-last=1"} {
		st, _ := runPrune(t, m, line)
		if st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, "\n"), "vm/link") {
			t.Errorf("%q on a symlinked group: %s %v", line, st.State, st.Errors)
		}
	}
	if _, err := os.Stat(filepath.Join(target, day0.Format(store.TimeFormat))); err != nil {
		t.Errorf("prune removed through a symlink: %v", err)
	}
}

// lineDiff lists the lines only one of a and b has.
func lineDiff(a, b string) string {
	as, bs := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for _, l := range as {
		if !slices.Contains(bs, l) {
			out = append(out, "- "+l)
		}
	}
	for _, l := range bs {
		if !slices.Contains(as, l) {
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}

// TestPruneJobChangesMeanwhile: between the plan and each removal,
// another process protects one snapshot, removes one, and puts a
// symlink where one was; prune skips the first two with a message,
// records the third as its error (the job fails) and goes on.
func TestPruneJobChangesMeanwhile(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{Type: store.TypeVM, ID: "1"}
	snaps := backups(t, s, g, 5)
	elsewhere := t.TempDir()
	hook := func(snap store.Snapshot) {
		var err error
		switch snap {
		case snaps[0]:
			err = s.SetProtected(t.Context(), snap, true)
		case snaps[1]:
			err = s.ForgetSnapshot(t.Context(), snap)
		case snaps[2]:
			dir := s.SnapshotPath(snap)
			if err = os.Rename(dir, filepath.Join(elsewhere, "moved")); err == nil {
				err = os.Symlink(filepath.Join(elsewhere, "moved"), dir)
			}
		}
		if err != nil {
			t.Error(err)
		}
	}
	m := jobs.NewManager(context.Background(), s, nil)
	if err := m.Register(Kind{Location: time.UTC, beforeForget: hook}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	st, rep, log := runPruneLog(t, m, "start group=vm/1 keep-last=1")
	if st.State != jobs.StateFailed || st.ErrorCount != 1 || !strings.Contains(st.Errors[0], snaps[2].String()) {
		t.Errorf("state %s, errors %v", st.State, st.Errors)
	}
	got := []string{}
	for _, r := range rep.Snapshots {
		got = append(got, fmt.Sprintf("%s removed=%v skipped=%q failed=%v", r.Mark, r.Removed, r.Skipped, r.Error != ""))
	}
	want := []string{`remove removed=false skipped="protected" failed=false`, `remove removed=false skipped="gone" failed=false`,
		`remove removed=false skipped="" failed=true`, `remove removed=true skipped="" failed=false`, `keep removed=false skipped="" failed=false`}
	if !slices.Equal(got, want) || rep.Removed != 1 || rep.Skipped != 2 || rep.Failed != 1 {
		t.Errorf("report %+v\n got  %q\n want %q", rep, got, want)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "moved", store.ManifestName)); err != nil {
		t.Errorf("removal followed the symlink: %v", err)
	}
	if !strings.Contains(log, "protected meanwhile") || !strings.Contains(log, "removed meanwhile") {
		t.Errorf("log:\n%s", log)
	}
}

// TestPruneJobCancel: a prune cancelled while it removes stops before
// the next removal; what it did not reach stays.
func TestPruneJobCancel(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{Type: store.TypeVM, ID: "1"}
	snaps := backups(t, s, g, 5)
	m := jobs.NewManager(context.Background(), s, nil)
	cancel := func(store.Snapshot) { m.Cancel("prune") }
	if err := m.Register(Kind{Location: time.UTC, beforeForget: cancel}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	st, rep := runPrune(t, m, "start group=vm/1 keep-last=1")
	if st.State != jobs.StateCancelled || rep.Removed > 1 || rep.Failed != 0 || len(rep.Snapshots) > 1 {
		t.Errorf("cancelled: %s %+v", st.State, rep)
	}
	if n := len(left(t, s, g)); n < len(snaps)-1 {
		t.Errorf("%d of %d snapshots left after a cancel at the first removal", n, len(snaps))
	}
}

// TestPruneJobHostileGroup: entries named like snapshots that are not
// snapshot directories (a file, a symlink to a snapshot elsewhere) are
// errors naming them; nothing outside the store is touched, the real
// snapshots are pruned.
func TestPruneJobHostileGroup(t *testing.T) {
	s := storetest.NewStore(t)
	g := store.Group{Type: store.TypeHost, ID: "h"}
	snaps := backups(t, s, g, 3)
	outside := storetest.NewStore(t)
	victim := backups(t, outside, g, 1)[0]
	dir := s.GroupPath(g)
	asFile := filepath.Join(dir, "2020-01-01T00:00:00Z")
	if err := os.WriteFile(asFile, []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside.SnapshotPath(victim), filepath.Join(dir, "2020-01-02T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	st, rep := runPrune(t, newManager(t, s), "start group=host/h keep-last=1")
	errs := strings.Join(st.Errors, "\n")
	if st.State != jobs.StateFailed || rep.Failed != 2 || rep.Removed != 2 ||
		!strings.Contains(errs, "2020-01-01T00:00:00Z") || !strings.Contains(errs, "2020-01-02T00:00:00Z") {
		t.Errorf("%s %+v\n%s", st.State, rep, errs)
	}
	if _, err := os.Stat(filepath.Join(outside.SnapshotPath(victim), store.ManifestName)); err != nil {
		t.Errorf("the snapshot the symlink points to: %v", err)
	}
	if _, err := os.Stat(asFile); err != nil {
		t.Errorf("the file: %v", err)
	}
	if !exists(t, s, snaps[2]) || exists(t, s, snaps[0]) || exists(t, s, snaps[1]) {
		t.Errorf("left %q", left(t, s, g))
	}
}

// TestReportBounded: past MaxReported snapshots the report counts
// instead of listing.
func TestReportBounded(t *testing.T) {
	var r Report
	for i := range MaxReported + 7 {
		r.add(SnapshotResult{Mark: Remove, Removed: i%2 == 0})
	}
	if len(r.Snapshots) != MaxReported || r.SnapshotsOmitted != 7 || r.Marks.Remove != MaxReported+7 ||
		r.Removed+r.Skipped+r.Failed != (MaxReported+7+1)/2 {
		t.Errorf("len %d omitted %d marks %+v removed %d", len(r.Snapshots), r.SnapshotsOmitted, r.Marks, r.Removed)
	}
}
