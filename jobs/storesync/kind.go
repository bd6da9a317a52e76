package storesync

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// KindName is the sync job's kind, also its .jobs directory.
const KindName = "sync"

// Kind is the sync job: it copies snapshots from the store named by
// from= into the manager's store (the target).
type Kind struct{}

var (
	_ jobs.Kind     = Kind{}
	_ jobs.Work     = (*work)(nil)
	_ jobs.Reporter = (*work)(nil)
	_ Observer      = (*jobs.Job)(nil)
)

// Name implements jobs.Kind.
func (Kind) Name() string { return KindName }

// New implements jobs.Kind.
func (Kind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	o, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	return &work{to: s, opt: o}, nil
}

// JobOptions are a sync job's parameters.
type JobOptions struct {
	Options
	// From is the source store's directory (absolute).
	From string
}

// ParseParams reads sync's key=value parameters:
//
//	from=/ABSOLUTE/STORE/DIR
//	[group=[ns/NAME/…]TYPE/ID | snapshot=[ns/NAME/…]TYPE/ID/(TIME|latest)] [ns=NS]
//	[remove-vanished=true] [workers=1..64]
func ParseParams(m map[string]string) (JobOptions, error) {
	p := jobs.NewParams(KindName, m)
	o := JobOptions{From: p.String("from", "")}
	o.RemoveVanished = p.Bool("remove-vanished", false)
	o.Workers = p.Int("workers", 0, 1, MaxWorkers)
	o.NS = store.NS(strings.Trim(p.String("ns", ""), "/"))
	group, snap := p.String("group", ""), p.String("snapshot", "")
	if err := p.Done(); err != nil {
		return o, err
	}
	bad := func(key, v string, err error) (JobOptions, error) {
		return o, fmt.Errorf("%w: sync %s=%q: %w", jobs.ErrBadParam, key, v, err)
	}
	if o.From == "" || !filepath.IsAbs(o.From) || filepath.Clean(o.From) != o.From {
		return bad("from", o.From, fmt.Errorf("want the source store's absolute directory"))
	}
	if err := o.NS.Check(); err != nil {
		return bad("ns", string(o.NS), err)
	}
	if group != "" && snap != "" {
		return bad("group", group, fmt.Errorf("give group= or snapshot=, not both"))
	}
	if group != "" {
		g, err := ParseGroup(o.NS, group)
		if err != nil {
			return bad("group", group, err)
		}
		o.Group = &g
	}
	if snap != "" {
		r, err := store.ParseRef(snap)
		if err != nil {
			return bad("snapshot", snap, err)
		}
		if r.NS == "" {
			r.NS = o.NS
		}
		o.Snapshot = &r
	}
	if err := o.Check(); err != nil {
		return bad("remove-vanished", strconv.FormatBool(o.RemoveVanished), err)
	}
	return o, nil
}

// ParseGroup reads "[ns/NAME/…]TYPE/ID" (a group, not a snapshot);
// without a namespace of its own the group is taken in ns.
func ParseGroup(ns store.NS, s string) (store.Group, error) {
	r, err := store.ParseRef(s)
	if err != nil {
		return store.Group{}, err
	}
	if !IsGroupRef(s) {
		return store.Group{}, fmt.Errorf("%q names a snapshot: want a group, [ns/NAME/…]TYPE/ID", s)
	}
	if r.Group.NS == "" {
		r.Group.NS = ns
	}
	return r.Group, nil
}

// IsGroupRef tells a group reference ("TYPE/ID") from a snapshot's
// ("TYPE/ID/TIME", "TYPE/ID/latest"); s must parse with store.ParseRef.
func IsGroupRef(s string) bool {
	r, err := store.ParseRef(s)
	return err == nil && r.Latest && !strings.HasSuffix(strings.TrimRight(s, "/"), "/latest")
}

// Params returns the options as the parameters ParseParams reads back.
func (o JobOptions) Params() map[string]string {
	m := map[string]string{"from": o.From}
	if o.NS != "" {
		m["ns"] = string(o.NS)
	}
	if o.Group != nil {
		m["group"] = o.Group.String()
	}
	if o.Snapshot != nil {
		m["snapshot"] = o.Snapshot.String()
	}
	if o.RemoveVanished {
		m["remove-vanished"] = "true"
	}
	if o.Workers > 0 {
		m["workers"] = strconv.Itoa(o.Workers)
	}
	return m
}

// work is one sync job.
type work struct {
	to  *store.Store
	opt JobOptions

	mu     sync.Mutex
	syncer *Syncer
}

// Report implements jobs.Reporter.
func (w *work) Report() any {
	w.mu.Lock()
	sy := w.syncer
	w.mu.Unlock()
	if sy == nil {
		return Report{From: w.opt.From, To: w.to.Root(), Snapshots: []SnapshotResult{}}
	}
	return sy.Report()
}

// Run implements jobs.Work.
func (w *work) Run(ctx context.Context, j *jobs.Job) error {
	defer j.SetPhase("done")
	j.SetPhase("opening the source")
	from, err := store.OpenWith(w.opt.From, store.OpenOptions{Logger: w.to.Logger()}) // its client logs as the destination
	if err != nil {
		return fmt.Errorf("source: %w", err)
	}
	defer from.Close()
	sy, err := New(from, w.to, w.opt.Options, j)
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.syncer = sy
	w.mu.Unlock()
	j.SetPhase("copying")
	j.Logf("sync from %s to %s", from.Root(), w.to.Root())
	return sy.Run(ctx)
}
