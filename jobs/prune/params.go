package prune

import (
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// JobOptions are the parameters of a prune job.
type JobOptions struct {
	Options
	// Group is the one group to prune; with All, every group of NS and
	// of the namespaces below it.
	Group store.Group
	All   bool
	NS    store.NS
	// DryRun plans and reports, and removes nothing.
	DryRun bool
}

// ParseParams reads prune's key=value parameters:
//
//	group=[ns/NAME/…]TYPE/ID | all=1 [ns=NS]
//	keep-last=N keep-hourly=N keep-daily=N keep-weekly=N keep-monthly=N keep-yearly=N
//	dry-run[=true|false]
//
// A group without a namespace is taken in ns. Counts are 0 (not given)
// to MaxKeep.
func ParseParams(m map[string]string) (JobOptions, error) {
	p := jobs.NewParams("prune", m)
	o := JobOptions{
		All:    p.Bool("all", false),
		DryRun: p.Bool("dry-run", false),
		Options: Options{
			Last:    p.Int("keep-last", 0, 0, MaxKeep),
			Hourly:  p.Int("keep-hourly", 0, 0, MaxKeep),
			Daily:   p.Int("keep-daily", 0, 0, MaxKeep),
			Weekly:  p.Int("keep-weekly", 0, 0, MaxKeep),
			Monthly: p.Int("keep-monthly", 0, 0, MaxKeep),
			Yearly:  p.Int("keep-yearly", 0, 0, MaxKeep),
		},
	}
	o.NS = store.NS(strings.Trim(p.String("ns", ""), "/"))
	group := p.String("group", "")
	if err := p.Done(); err != nil {
		return o, err
	}
	if err := o.NS.Check(); err != nil {
		return o, fmt.Errorf("%w: prune ns=%q: %w", jobs.ErrBadParam, o.NS, err)
	}
	switch {
	case o.All && group != "":
		return o, fmt.Errorf("%w: prune: give group=TYPE/ID or all=true, not both", jobs.ErrBadParam)
	case !o.All && group == "":
		return o, fmt.Errorf("%w: prune: give group=[ns/NAME/…]TYPE/ID, or all=true for every group", jobs.ErrBadParam)
	case group != "":
		g, err := ParseGroup(o.NS, group)
		if err != nil {
			return o, fmt.Errorf("%w: prune group=%q: %w", jobs.ErrBadParam, group, err)
		}
		o.Group = g
	}
	return o, nil
}

// ParseGroup reads "[ns/NAME/…]TYPE/ID"; without a namespace of its own
// the group is taken in ns.
func ParseGroup(ns store.NS, s string) (store.Group, error) {
	r, err := store.ParseRef(s)
	if err != nil {
		return store.Group{}, err
	}
	if !r.Latest || strings.HasSuffix(strings.TrimRight(s, "/"), "/latest") {
		return store.Group{}, fmt.Errorf("%q names a snapshot: want a group, [ns/NAME/…]TYPE/ID", s)
	}
	if r.Group.NS == "" {
		r.Group.NS = ns
	}
	return r.Group, nil
}

// Params returns the options as the key=value parameters that
// ParseParams reads back.
func (o JobOptions) Params() map[string]string {
	m := map[string]string{}
	o.Options.Params(m)
	if o.All {
		m["all"] = "true"
		if o.NS != "" {
			m["ns"] = string(o.NS)
		}
	} else {
		m["group"] = o.Group.String()
	}
	if o.DryRun {
		m["dry-run"] = "true"
	}
	return m
}

// describe names what a job prunes, for its log.
func (o JobOptions) describe() string {
	if !o.All {
		return "group " + o.Group.String()
	}
	if o.NS == "" {
		return "every group of the store"
	}
	return "every group of namespace " + string(o.NS) + " and below"
}
