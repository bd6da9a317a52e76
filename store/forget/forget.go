package forget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/store"
)

// Outcomes of one snapshot in a forget.
const (
	Removed     = "removed"
	WouldRemove = "would_remove" // --dry-run
	Protected   = "protected"
	Locked      = "locked"
	NotFound    = "not_found"
	Failed      = "failed"
)

// Result is one snapshot's outcome.
type Result struct {
	Snapshot string `json:"snapshot"`
	Finished bool   `json:"finished"`
	State    string `json:"state"`
	Error    string `json:"error,omitempty"`
}

// Report is what forget did (or, a dry run, would do): cairn forget
// prints it as text (WriteText) or JSON.
type Report struct {
	DryRun     bool     `json:"dry_run"`
	Snapshots  []Result `json:"snapshots"`
	Group      string   `json:"group,omitempty"`
	GroupState string   `json:"group_state,omitempty"` // --group: removed, would_remove, kept
	Removed    int      `json:"removed"`
	Refused    int      `json:"refused"`
	NextStep   string   `json:"next_step,omitempty"`
}

// One removes (or, dry, judges) one snapshot.
func One(ctx context.Context, s *store.Store, snap store.Snapshot, dry bool) Result {
	r := Result{Snapshot: snap.String(), State: Removed}
	_, err := os.Stat(s.SnapshotPath(snap) + "/" + store.ManifestName)
	r.Finished = err == nil
	if dry {
		r.State = WouldRemove
		err = s.CanForget(ctx, snap)
	} else {
		err = s.ForgetSnapshot(ctx, snap)
	}
	if err != nil {
		r.State, r.Error = state(err), err.Error()
	}
	return r
}

func state(err error) string {
	switch {
	case errors.Is(err, store.ErrProtected):
		return Protected
	case errors.Is(err, store.ErrLocked):
		return Locked
	case errors.Is(err, store.ErrNotFound):
		return NotFound
	}
	return Failed
}

// Add counts one snapshot's outcome.
func (r *Report) Add(res Result) {
	r.Snapshots = append(r.Snapshots, res)
	switch res.State {
	case Removed, WouldRemove:
		r.Removed++
	default:
		r.Refused++
		switch res.State {
		case Protected:
			r.NextStep = "protected snapshots stay: cairn unprotect SNAPSHOT allows their removal"
		case Locked:
			if r.NextStep == "" {
				r.NextStep = "locked snapshots are in use (a backup builds on them, or a verify, tape export or restore reads them): forget them once that ends"
			}
		}
	}
}

// Group removes (or, dry, judges) every snapshot of g and then g,
// reporting to rep; an error is one that left everything as it was (the
// group's lock).
func Group(ctx context.Context, s *store.Store, g store.Group, dry bool, rep *Report) error {
	rep.Group = g.String()
	snaps, err := s.Snapshots(g)
	if err != nil {
		return err
	}
	if dry {
		for _, si := range snaps {
			rep.Add(One(ctx, s, si.Snapshot, true))
		}
		rep.GroupState = WouldRemove
		if rep.Refused > 0 {
			rep.GroupState = "kept"
		}
		return nil
	}
	removed, err := s.ForgetGroup(ctx, g)
	for _, snap := range removed {
		rep.Add(Result{Snapshot: snap.String(), State: Removed, Finished: finishedIn(snaps, snap)})
	}
	rep.GroupState = Removed
	if err == nil {
		return nil
	}
	rep.GroupState = "kept"
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var se *store.SnapshotError
		if !errors.As(e, &se) {
			if len(removed) == 0 && len(rep.Snapshots) == 0 && errors.Is(e, store.ErrLocked) {
				return e // the group's own lock: a backup of it runs
			}
			rep.Refused++
			rep.NextStep = fmt.Sprintf("group %s kept: %v", g, e)
			continue
		}
		rep.Add(Result{Snapshot: se.Snapshot.String(), Finished: finishedIn(snaps, se.Snapshot),
			State: state(se.Err), Error: se.Err.Error()})
	}
	return nil
}

func finishedIn(snaps []store.SnapshotInfo, snap store.Snapshot) bool {
	for _, si := range snaps {
		if si.Snapshot == snap {
			return si.Finished
		}
	}
	return false
}

// WriteText writes what was removed (or would be) to stdout and what
// was refused, and why, to stderr.
func (rep *Report) WriteText(stdout, stderr io.Writer) {
	for _, r := range rep.Snapshots {
		what := r.Snapshot
		if !r.Finished {
			what += " (unfinished)"
		}
		switch r.State {
		case Removed:
			fmt.Fprintf(stdout, "removed %s\n", what)
		case WouldRemove:
			fmt.Fprintf(stdout, "would remove %s\n", what)
		case Protected:
			fmt.Fprintf(stderr, "refused %s: it is protected; 'cairn unprotect %s' allows its removal\n", what, r.Snapshot)
		default:
			fmt.Fprintf(stderr, "refused %s: %s\n", what, termsafe.Escape(r.Error))
		}
	}
	switch rep.GroupState {
	case Removed:
		fmt.Fprintf(stdout, "removed group %s\n", rep.Group)
	case WouldRemove:
		fmt.Fprintf(stdout, "would remove group %s\n", rep.Group)
	case "kept":
		if rep.DryRun {
			fmt.Fprintf(stderr, "would keep group %s: not every snapshot of it would be removed\n", rep.Group)
		} else {
			fmt.Fprintf(stderr, "kept group %s: not every snapshot of it could be removed\n", rep.Group)
		}
	}
	if rep.Removed > 0 && !rep.DryRun {
		fmt.Fprintln(stdout, "the chunks they used stay until garbage collection removes them (cairn gc)")
	}
}
