package serve

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Run runs the daemon of opt until ctx ends (SIGTERM, SIGINT: the
// caller's context), then stops as the package's doc says and returns
// nil. An error is returned only when the daemon cannot start.
func Run(ctx context.Context, opt Options) error {
	d, err := New(opt)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}

// Run serves until ctx ends: the listener and the mount first, a sample
// and a staleness check, the catch-up runs, readiness, then the
// schedule. SIGHUP reloads the configuration (Reload).
func (d *Daemon) Run(ctx context.Context) error {
	d.mu.Lock()
	d.started = d.opt.Now()
	d.mu.Unlock()
	web, err := d.listen()
	if err != nil {
		d.close()
		return err
	}
	d.mu.Lock()
	d.addr = web.addr()
	d.mu.Unlock()
	mnt, err := d.mount()
	if err != nil {
		web.stop()
		d.close()
		return err
	}
	d.mu.Lock()
	d.mnt = mnt
	d.mu.Unlock()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	d.sample(ctx)
	d.CheckStale(ctx)
	d.catchUp()
	if err := sdNotify("READY=1"); err != nil {
		d.opt.Logger.Warn("readiness not told to the service manager", "err", err)
	}
	d.opt.Logger.Info("serving", "store", d.opt.StoreName, "jobs", len(d.opt.Jobs), "listen", web.addr(), "mount", d.opt.Mount)
	d.loop(ctx, hup, mnt.done())
	_ = sdNotify("STOPPING=1")
	d.opt.Logger.Info("stopping: cancelling running jobs")
	d.close()
	d.mu.Lock()
	d.mnt = nil
	d.mu.Unlock()
	mnt.unmount(d.opt.Logger)
	web.stop()
	return nil
}

// close stops starting jobs, cancels the running ones and waits for
// them (their runs recorded).
func (d *Daemon) close() {
	d.mu.Lock()
	d.stopping = true
	d.mu.Unlock()
	d.mgr.Close()
	d.wg.Wait()
	d.stopJob()
}

// loop starts the jobs as they fall due and checks the watched groups
// every StaleEvery, until ctx ends.
func (d *Daemon) loop(ctx context.Context, hup <-chan os.Signal, unmounted <-chan struct{}) {
	tick := time.NewTicker(d.opt.StaleEvery)
	defer tick.Stop()
	timer := time.NewTimer(d.untilDue())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
			d.startDue()
		case <-tick.C:
			d.CheckStale(ctx)
		case <-hup:
			d.Reload()
		case <-d.reload:
			_ = sdNotify("RELOADING=1")
			d.doReload()
			_ = sdNotify("READY=1")
		case <-unmounted:
			d.opt.Logger.Error("the store was unmounted from outside; the jobs go on", "dir", d.opt.Mount)
			unmounted = nil
		}
		timer.Reset(d.untilDue())
	}
}

// maxWait bounds a wait for the next due time, so a clock set forward
// (or a suspend) is noticed within it.
const maxWait = time.Minute

// untilDue is how long until the next job is due (at most maxWait).
func (d *Daemon) untilDue() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	now, wait := d.opt.Now(), maxWait
	for _, t := range d.next {
		if !t.IsZero() {
			wait = min(wait, t.Sub(now))
		}
	}
	return max(wait, 0)
}

// startDue starts every job that is due. A job's next due time is the
// first after now: the times it missed while it waited are not run.
func (d *Daemon) startDue() {
	d.mu.Lock()
	now := d.opt.Now()
	var due []JobSpec
	var at []time.Time
	for _, j := range d.jobs {
		t := d.next[j.Name]
		if t.IsZero() || t.After(now) {
			continue
		}
		due, at = append(due, j), append(at, t)
		d.next[j.Name] = j.Schedule.Next(now)
		if n := d.next[j.Name]; !n.IsZero() && !n.After(now) { // a schedule that would have the loop spin
			d.opt.Logger.Error("schedule gives no time after now: the job is not run again", "job", j.Name, "schedule", j.ScheduleText, "next", n)
			d.next[j.Name] = time.Time{}
		}
	}
	d.mu.Unlock()
	for i, j := range due {
		d.launch(j, at[i], false)
	}
}

// catchUp starts once each catch-up job whose schedule had a due time
// between its last recorded run and now. A job never run is not caught
// up: it first runs when next due.
func (d *Daemon) catchUp() {
	d.mu.Lock()
	jobs := d.jobs
	d.mu.Unlock()
	now := d.opt.Now()
	for _, j := range jobs {
		last := d.journal.LastDue(j.Name)
		if !j.CatchUp || last.IsZero() || !j.Schedule.Missed(last, now) {
			continue
		}
		due := j.Schedule.Next(last)
		d.opt.Logger.Info("catching up a missed run", "job", j.Name, "due", due)
		d.launch(j, due, true)
	}
}

var errStopping = errors.New("the daemon is stopping")
