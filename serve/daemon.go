package serve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/serve/runlog"
)

// Daemon runs one store's scheduled jobs and watches its groups. Make
// one with New, run it with Run; Status and Reload may be called from
// any goroutine.
type Daemon struct {
	opt     Options // Store, State, Listen, Mount, Logger, Now: fixed
	mgr     *jobs.Manager
	journal *runlog.Journal
	history *runlog.History
	host    string
	started time.Time
	stopJob context.CancelFunc // ends the manager's context
	reload  chan struct{}
	wg      sync.WaitGroup // running scheduled jobs

	mu       sync.Mutex
	jobs     []JobSpec
	stale    []StaleSpec
	notifier Notifier
	next     map[string]time.Time // job name → next due time
	running  map[string]string    // kind → job name, while a scheduled run of it runs
	stopping bool
	addr     string                 // the HTTP listener's address, once it listens
	groups   map[string]*groupState // watched and known groups, by name
	current  runlog.Sample
	lastGC   time.Time
	mnt      *mounted // the mount while Run serves it
}

// New checks opt, opens the journal and history in the state directory
// and makes the job manager. Nothing runs before Run.
func New(opt Options) (*Daemon, error) {
	if err := opt.setDefaults(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.State, 0o700); err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	journal, err := runlog.OpenJournal(filepath.Join(opt.State, "journal.json"), opt.RunsPerJob)
	if err != nil {
		return nil, err
	}
	history, err := runlog.OpenHistory(filepath.Join(opt.State, "history.json"), opt.Samples)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := NewManager(ctx, opt.Store, opt.Logger)
	if err != nil {
		cancel()
		return nil, err
	}
	host, _ := os.Hostname()
	d := &Daemon{opt: opt, mgr: mgr, journal: journal, history: history, host: host, stopJob: cancel,
		reload: make(chan struct{}, 1), next: map[string]time.Time{}, running: map[string]string{},
		groups: map[string]*groupState{}}
	d.setConfig(opt)
	return d, nil
}

// Manager is the daemon's job manager: the mount's .jobs tree starts
// jobs through it, so they and the scheduled ones run one of a kind at
// a time.
func (d *Daemon) Manager() *jobs.Manager { return d.mgr }

// setConfig takes the jobs, stale groups and notifier of opt.
func (d *Daemon) setConfig(opt Options) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.jobs, d.stale, d.notifier = opt.Jobs, opt.Stale, opt.Notifier
	now := d.opt.Now()
	d.next = map[string]time.Time{}
	for _, j := range d.jobs {
		d.next[j.Name] = j.Schedule.Next(now)
	}
	for name, g := range d.groups {
		if g.watched {
			delete(d.groups, name)
		}
	}
	for _, st := range d.stale {
		g, _ := staleGroup(st) // checked by setDefaults
		d.groups[g.Name()] = &groupState{Group: g, watched: true}
	}
}

// Addr is the address the HTTP listener has ("" before Run has it
// listening, or without one).
func (d *Daemon) Addr() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addr
}

// Reload asks the running daemon to take its configuration again
// through Options.Reload, as SIGHUP does; it returns at once.
func (d *Daemon) Reload() {
	select {
	case d.reload <- struct{}{}:
	default: // one is pending already
	}
}

// doReload runs Options.Reload: on error the old configuration stays.
func (d *Daemon) doReload() {
	if d.opt.Reload == nil {
		d.opt.Logger.Warn("reload asked, but this daemon has no configuration to read again")
		return
	}
	opt, err := d.opt.Reload()
	if err == nil {
		opt.Store, opt.State = d.opt.Store, d.opt.State
		err = opt.setDefaults()
	}
	if err != nil {
		d.opt.Logger.Error("reload failed, keeping the configuration", "err", err)
		return
	}
	d.setConfig(opt)
	d.opt.Logger.Info("configuration reloaded", "jobs", len(opt.Jobs), "stale", len(opt.Stale))
}

// Status is what the daemon knows now: the journal's runs (running
// ones included), the groups, the store's size now and over time, the
// next due times.
func (d *Daemon) Status() runlog.Status {
	d.mu.Lock()
	defer d.mu.Unlock()
	st := runlog.Status{Store: d.opt.StoreName, Now: d.opt.Now(), Started: d.started, Runs: d.journal.Runs(),
		Current: d.current, Series: d.history.Samples(), LastGC: d.lastGC, Next: map[string]time.Time{}}
	for name, t := range d.next {
		st.Next[name] = t
	}
	for _, g := range d.groups {
		st.Groups = append(st.Groups, g.Group)
	}
	sortGroups(st.Groups)
	return st
}

// emit hands ev to the notifier and logs it.
func (d *Daemon) emit(kind runlog.EventKind, run *runlog.Run, g *runlog.Group, summary string) {
	ev := runlog.Event{Kind: kind, Time: d.opt.Now(), Store: d.opt.StoreName, Host: d.host, Run: run, Group: g, Summary: summary}
	d.opt.Logger.Info("event", "event", string(kind), "summary", summary)
	d.mu.Lock()
	n := d.notifier
	d.mu.Unlock()
	if n != nil {
		n.Notify(ev)
	}
}
