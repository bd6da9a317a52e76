package serve

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/cairnfs/cairn/jobs/backup"
	"github.com/cairnfs/cairn/serve/runlog"
	"github.com/cairnfs/cairn/store"
)

// Schedule is when a job is due (package calendar's Event is one).
type Schedule interface {
	// Next is the first due time after after.
	Next(after time.Time) time.Time
	// Missed reports whether a due time fell after last and up to now.
	Missed(last, now time.Time) bool
}

// Notifier hears of every event (package notify delivers them). Notify
// must not block on delivery.
type Notifier interface {
	Notify(runlog.Event)
}

// JobSpec is one scheduled job, as the configuration names it (the
// fields of config.Job).
type JobSpec struct {
	Name         string
	Kind         string // a kind of Kinds: backup, verify, prune, gc, sync, tape-export…
	Schedule     Schedule
	ScheduleText string            // the schedule as written, for logs
	Params       map[string]string // the kind's key=value parameters
	// Namespace is the job's ns parameter; Group (TYPE/ID) and Sources
	// (NAME.pxar:DIR, NAME.img:PATH …) are the backup job's group and
	// sources parameters.
	Namespace string
	Group     string
	Sources   []string
	// CatchUp runs the job once at start when a due time passed while
	// the daemon was down (see the package's doc).
	CatchUp bool
	Line    int // where the configuration defines it (0: unknown)
}

// StaleSpec watches a group: its newest finished snapshot must not be
// older than MaxAge.
type StaleSpec struct {
	Namespace string
	Group     string // TYPE/ID
	MaxAge    time.Duration
	Line      int
}

// Options are what the daemon runs.
type Options struct {
	Store     *store.Store // opened by the caller, closed by it after Run
	StoreName string       // how events name the store (default: its directory)
	// State is the directory of the journal and the history (default:
	// the store's .cairn-serve directory, so they move with the store).
	State    string
	Jobs     []JobSpec
	Stale    []StaleSpec
	Notifier Notifier // nil: events are only logged
	// Listen is the HTTP listener's address ("": no listener); Handlers
	// are served on it beside /healthz.
	Listen   string
	Handlers map[string]http.Handler
	// Mount, if set, is the directory the store is mounted on (package
	// fs, with the daemon's .jobs tree) while the daemon runs.
	Mount string
	// Reload, if set, is called on SIGHUP (and by Daemon.Reload): its
	// jobs, stale groups and notifier replace the running ones; on error
	// the old ones stay. Store, State, Listen and Mount are not changed
	// by a reload.
	Reload func() (Options, error)
	Logger *slog.Logger
	// StaleEvery is how often watched groups are checked (default 1 min).
	StaleEvery time.Duration
	// Now is the clock of schedules and staleness (default time.Now).
	Now func() time.Time
	// RunsPerJob bounds the journal (default 20), Samples the history
	// (default 1000).
	RunsPerJob, Samples int
}

// Defaults of Options.
const (
	DefaultStaleEvery = time.Minute
	DefaultRunsPerJob = 20
	DefaultSamples    = 1000
	StateDirName      = ".cairn-serve"
)

// ErrBadOptions is what a configuration the daemon cannot run wraps.
var ErrBadOptions = errors.New("bad serve configuration")

// setDefaults fills the defaults in and checks the jobs and stale groups.
func (o *Options) setDefaults() error {
	if o.Store == nil {
		return fmt.Errorf("%w: no store", ErrBadOptions)
	}
	if o.StoreName == "" {
		o.StoreName = o.Store.Root()
	}
	if o.State == "" {
		o.State = o.Store.Root() + "/" + StateDirName
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StaleEvery <= 0 {
		o.StaleEvery = DefaultStaleEvery
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.RunsPerJob <= 0 {
		o.RunsPerJob = DefaultRunsPerJob
	}
	if o.Samples <= 0 {
		o.Samples = DefaultSamples
	}
	return o.check()
}

// check refuses what cannot run: jobs without a name, a schedule or a
// known kind, names given twice, parameters the kind refuses, watched
// groups that are no groups. Errors name the job and its line.
func (o *Options) check() error {
	kinds := map[string]bool{}
	for _, k := range Kinds() {
		kinds[k.Name()] = true
	}
	seen := map[string]bool{}
	for _, j := range o.Jobs {
		where := fmt.Sprintf("job %q%s", j.Name, atLine(j.Line))
		switch {
		case j.Name == "":
			return fmt.Errorf("%w: job%s: no name", ErrBadOptions, atLine(j.Line))
		case seen[j.Name]:
			return fmt.Errorf("%w: %s: name given twice", ErrBadOptions, where)
		case !kinds[j.Kind]:
			return fmt.Errorf("%w: %s: kind %q: want one of %s", ErrBadOptions, where, j.Kind, strings.Join(slices.Sorted(maps.Keys(kinds)), ", "))
		case j.Schedule == nil:
			return fmt.Errorf("%w: %s: no schedule", ErrBadOptions, where)
		}
		seen[j.Name] = true
		if err := checkParams(o.Store, j); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrBadOptions, where, err)
		}
	}
	for _, st := range o.Stale {
		if _, err := staleGroup(st); err != nil {
			return fmt.Errorf("%w: stale%s: %w", ErrBadOptions, atLine(st.Line), err)
		}
	}
	return nil
}

// checkParams lets the kind check the job's parameters (Kind.New makes
// the work without starting it).
func checkParams(s *store.Store, j JobSpec) error {
	if j.Kind != backup.KindName && (j.Group != "" || len(j.Sources) > 0) {
		return fmt.Errorf("group and sources are the backup job's: give %s's parameters in params", j.Kind)
	}
	for _, k := range Kinds() {
		if k.Name() == j.Kind {
			_, err := k.New(s, j.JobParams())
			return err
		}
	}
	return nil
}

// JobParams are the key=value parameters the job is started with: its
// Params, with Namespace as ns, Group as group and Sources as sources
// (comma separated).
func (j JobSpec) JobParams() map[string]string {
	m := maps.Clone(j.Params)
	if m == nil {
		m = map[string]string{}
	}
	if j.Namespace != "" {
		m["ns"] = j.Namespace
	}
	if j.Group != "" {
		m["group"] = j.Group
	}
	if len(j.Sources) > 0 {
		m["sources"] = strings.Join(j.Sources, ",")
	}
	return m
}

// staleGroup is the group a StaleSpec watches.
func staleGroup(st StaleSpec) (runlog.Group, error) {
	typ, id, ok := strings.Cut(st.Group, "/")
	g := store.Group{NS: store.NS(strings.Trim(st.Namespace, "/")), Type: typ, ID: id}
	if !ok {
		return runlog.Group{}, fmt.Errorf("group %q: want TYPE/ID, such as host/web1", st.Group)
	}
	if err := g.Check(); err != nil {
		return runlog.Group{}, fmt.Errorf("group %q: %w", st.Group, err)
	}
	if st.MaxAge <= 0 {
		return runlog.Group{}, fmt.Errorf("group %q: max age %s: want a positive duration", st.Group, st.MaxAge)
	}
	return runlog.Group{Namespace: string(g.NS), Type: typ, ID: id, MaxAge: st.MaxAge}, nil
}

func atLine(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" (line %d)", n)
}

// DefaultListen is the HTTP listener's address unless told otherwise:
// loopback only.
const DefaultListen = "127.0.0.1:9817"

// Check checks opt as New does, without making or writing anything
// (cairn serve --check-config).
func Check(opt Options) error { return opt.setDefaults() }
