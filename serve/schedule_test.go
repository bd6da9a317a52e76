package serve

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
	"github.com/cairnfs/cairn/store/storetest"
)

// Jobs run when due, each recorded running then final with its UPID,
// due time and figures; status tells the next due times, the history
// has samples, the groups are known.
func TestJobsRunWhenDue(t *testing.T) {
	s, _ := testStore(t)
	src := t.TempDir()
	storetest.RichTree(t, src)
	ev := newEvents()
	sched := every{300 * time.Millisecond}
	home := after(300 * time.Millisecond)
	d, stop := start(t, Options{Store: s, Notifier: ev, Jobs: []JobSpec{
		{Name: "gc", Kind: "gc", Schedule: sched},
		{Name: "verify", Kind: "verify", Schedule: sched, Params: map[string]string{"ignore-verified": "false"}},
		{Name: "home", Kind: "backup", Schedule: home, Group: "host/home", Sources: []string{"root.pxar:" + src}},
	}})
	ctx := testCtx(t)
	for range 2 {
		ev.wait(t, ctx, isEvent(runlog.EventSucceeded, "gc"))
		ev.wait(t, ctx, isEvent(runlog.EventSucceeded, "verify"))
	}
	ev.wait(t, ctx, isEvent(runlog.EventSucceeded, "home"))
	st := d.Status()
	if st.Next["gc"].IsZero() || !st.Next["home"].IsZero() {
		t.Errorf("next due times %v: want gc's, none for the backup run once", st.Next)
	}
	stop()
	st = d.Status()
	okRun := map[string]runlog.Run{}
	for _, job := range []string{"gc", "verify", "home"} {
		runs := runsOf(st, job)
		ok := slices.IndexFunc(runs, func(r runlog.Run) bool { return r.Result == runlog.ResultOK })
		if ok < 0 {
			t.Fatalf("%s: no ok run in %+v", job, runs)
		}
		r := runs[ok]
		okRun[job] = r
		if r.UPID == "" || r.End.Before(r.Start) || r.Due.IsZero() || len(r.LogTail) == 0 || r.ExitState != "ok" {
			t.Errorf("%s: run recorded as %+v", job, r)
		}
		if job != "home" && !r.Due.Equal(r.Due.Truncate(sched.d)) {
			t.Errorf("%s: due %v is no due time of the schedule", job, r.Due)
		}
	}
	if r := okRun["home"]; r.Bytes == 0 || r.Chunks == 0 || !r.Due.Equal(home.When()) {
		t.Errorf("backup run %+v: want its bytes, chunks and due time %v", r, home.When())
	}
	if r := okRun["verify"]; r.Chunks == 0 {
		t.Errorf("verify run %+v: want the chunks it read", r)
	}
	if len(st.Series) < 2 || st.Current.Snapshots != 2 {
		t.Errorf("samples %+v, current %+v: want one at start and after each run, 2 snapshots now", st.Series, st.Current)
	}
	if st.LastGC.IsZero() || st.Current.Chunks == 0 || st.Current.StoredBytes == 0 {
		t.Errorf("status after a GC: last GC %v, current %+v", st.LastGC, st.Current)
	}
	names := []string{}
	for _, g := range st.Groups {
		names = append(names, g.Name())
		// the image is 1 MiB; its blob (an index's manifest entry) adds nothing
		if g.Name() == "vm/100" && g.Bytes < 1<<20 {
			t.Errorf("group %s: newest snapshot of %d bytes, want its image's 1 MiB at least", g.Name(), g.Bytes)
		}
	}
	if !slices.Equal(names, []string{"host/home", "vm/100"}) {
		t.Errorf("groups %v", names)
	}
	// the journal is in the store's state directory, where a new daemon reads it
	j, err := runlog.OpenJournal(filepath.Join(s.Root(), StateDirName, "journal.json"), 100)
	if err != nil || len(j.Runs()) != len(st.Runs) {
		t.Errorf("journal on disk: %d runs (%v), status %d", len(j.Runs()), err, len(st.Runs))
	}
}

// logWatch is a slog handler that hands the messages it is given to a
// channel.
type logWatch struct{ ch chan string }

func (w logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w logWatch) Handle(_ context.Context, r slog.Record) error {
	select {
	case w.ch <- r.Message:
	default:
	}
	return nil
}
func (w logWatch) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w logWatch) WithGroup(string) slog.Handler      { return w }

func (w logWatch) wait(t *testing.T, ctx context.Context, msg string) {
	t.Helper()
	for {
		select {
		case m := <-w.ch:
			if m == msg {
				return
			}
		case <-ctx.Done():
			t.Fatalf("log message %q not seen", msg)
		}
	}
}

// A run due while a job of its kind runs is recorded skipped: here a
// backup reads a FIFO the test writes only once the second one was
// skipped, so the first is running throughout.
func TestOneJobOfAKind(t *testing.T) {
	s, _ := testStore(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ev := newEvents()
	logs := logWatch{ch: make(chan string, 1000)}
	at := after(200 * time.Millisecond)
	d, stop := start(t, Options{Store: s, Notifier: ev, Logger: slog.New(logs), Jobs: []JobSpec{
		{Name: "slow", Kind: "backup", Schedule: at, Group: "vm/1", Sources: []string{"disk.img:" + fifo}},
		{Name: "second", Kind: "backup", Schedule: at, Group: "vm/2", Sources: []string{"disk.img:" + fifo}},
	}})
	// if the test fails before it writes the FIFO, the backup blocked
	// opening it gets an empty stream, so the daemon can stop
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	ctx := testCtx(t)
	logs.wait(t, ctx, "scheduled run skipped")
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(storetest.RandBytes("fifo", 300<<10))
	f.Close()
	ev.wait(t, ctx, isEvent(runlog.EventSucceeded, "slow"))
	stop()
	st := d.Status()
	second := runsOf(st, "second")
	if len(second) != 1 || second[0].Result != runlog.ResultSkipped || !strings.Contains(second[0].Error, "slow") {
		t.Errorf("second backup: %+v, want one run skipped because slow ran", second)
	}
	if n := ev.count(runlog.EventStarted, "second"); n != 0 {
		t.Errorf("%d started events for a skipped run", n)
	}
}

// A failing job (a corrupt chunk) gives exactly one started and one
// failed event, and its run records the first error and the log's end.
func TestFailingJob(t *testing.T) {
	s, snap := testStore(t)
	corruptChunk(t, s, snap)
	ev := newEvents()
	d, stop := start(t, Options{Store: s, Notifier: ev, Jobs: []JobSpec{
		{Name: "nightly", Kind: "verify", Schedule: after(100 * time.Millisecond)},
	}})
	failed := ev.wait(t, testCtx(t), isEvent(runlog.EventFailed, "nightly"))
	stop()
	if n, m, k := ev.count(runlog.EventStarted, ""), ev.count(runlog.EventFailed, ""), ev.count(runlog.EventSucceeded, ""); n != 1 || m != 1 || k != 0 {
		t.Errorf("events: %d started, %d failed, %d succeeded; want 1, 1, 0", n, m, k)
	}
	r := failed.Run
	if r.Result != runlog.ResultFailed || r.Error == "" || len(r.LogTail) == 0 || !strings.Contains(failed.Summary, `job "nightly" failed`) {
		t.Errorf("failed event %+v, run %+v", failed, r)
	}
	if runs := runsOf(d.Status(), "nightly"); len(runs) != 1 || runs[0].Result != runlog.ResultFailed {
		t.Errorf("journal: %+v", runs)
	}
}

// At start, a catch-up job whose schedule had a due time since its last
// run runs once; one without catch-up waits for its next due time.
func TestCatchUp(t *testing.T) {
	s, _ := testStore(t)
	sched := every{10 * time.Minute}
	last := sched.Next(time.Now()).Add(-30 * time.Minute)
	state := t.TempDir()
	j, err := runlog.OpenJournal(filepath.Join(state, "journal.json"), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, job := range []string{"catch", "wait"} {
		if err := j.Record(runlog.Run{Job: job, Kind: "gc", Due: last, Start: last, End: last, Result: runlog.ResultOK}); err != nil {
			t.Fatal(err)
		}
	}
	ev := newEvents()
	d, stop := start(t, Options{Store: s, State: state, Notifier: ev, Jobs: []JobSpec{
		{Name: "catch", Kind: "gc", Schedule: sched, CatchUp: true},
		{Name: "wait", Kind: "verify", Schedule: sched},
		{Name: "never", Kind: "prune", Schedule: sched, CatchUp: true, Params: map[string]string{"keep-last": "3", "all": "true"}},
	}})
	got := ev.wait(t, testCtx(t), isEvent(runlog.EventSucceeded, "catch"))
	stop()
	if !got.Run.CatchUp || !got.Run.Due.Equal(sched.Next(last)) {
		t.Errorf("catch-up run %+v: want CatchUp and the first missed due time %v", got.Run, sched.Next(last))
	}
	st := d.Status()
	if n := len(runsOf(st, "catch")); n != 2 {
		t.Errorf("catch: %d runs, want the old one and one catch-up", n)
	}
	if n, m := len(runsOf(st, "wait")), len(runsOf(st, "never")); n != 1 || m != 0 {
		t.Errorf("wait: %d runs (want the old one), never: %d (want none)", n, m)
	}
}
