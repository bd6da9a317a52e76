package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/usage"
	"github.com/spf13/cobra"
)

type duOpts struct {
	ns     string
	groups bool
	json   bool
}

func (a *app) duCmd() *cobra.Command {
	var o duOpts
	cmd := &cobra.Command{
		Use:   "du [--ns NS] [SNAPSHOT | GROUP …] [--groups] [--json]",
		Short: "what snapshots cost: the bytes only each references (freed when forgotten) and the bytes it shares",
		Long: `Du says what each snapshot and group costs in the store, as borg info's
"deduplicated size" and restic stats --mode raw-data do: UNIQUE is the
chunks no other snapshot references, what forgetting the snapshot (and
then cairn gc) frees; SHARED the chunks it shares with others; TOTAL every
chunk it references, each counted once however often its indexes list it.
Sizes are stored (the chunk files, compressed, as gc counts them), with
the logical (plain) size beside; FILES is the snapshot directory's own
files (indexes, blobs, manifest), freed by the forget itself. A group's
line counts its chunks once for all its snapshots: its UNIQUE is what
forgetting the whole group frees. The last line is the whole store.

Arguments: [ns/NAME/…]TYPE/ID/TIME or TYPE/ID/latest names a snapshot,
TYPE/ID a group (all its snapshots); none: every snapshot of --ns and the
namespaces below it. Whatever is shown, every index of the store is read
once (sharing is a property of the whole store): one stat per distinct
chunk, memory one map entry per distinct chunk. On a store on object
storage chunk sizes are not read (a request each): sizes are logical
there. An index that cannot be read is named, its snapshot's figures
leave it out, and the exit code is 3.`,
		RunE: func(_ *cobra.Command, args []string) error {
			sel, err := parseDuArgs(o.ns, args)
			if err != nil {
				return err
			}
			return a.du(o, sel)
		},
	}
	cmd.Flags().BoolVar(&o.groups, "groups", false, "list the groups only")
	cmd.Flags().BoolVar(&o.json, "json", false, "print JSON")
	nsFlag(cmd, &o.ns)
	return cmd
}

// duSel is what du shows: snapshots named, groups named (all their
// snapshots), or, with neither, every snapshot of ns and below.
type duSel struct {
	ns     store.NS
	refs   []store.Ref
	groups map[store.Group]bool
}

func parseDuArgs(ns string, args []string) (duSel, error) {
	sel := duSel{ns: store.NS(strings.Trim(ns, "/")), groups: map[store.Group]bool{}}
	if err := sel.ns.Check(); err != nil {
		return sel, usageErr("--ns %q: %v", ns, err)
	}
	for _, arg := range args {
		r, err := parseRefIn(ns, strings.Trim(arg, "/"))
		if err != nil {
			return sel, err
		}
		if r.Latest && !strings.HasSuffix(strings.Trim(arg, "/"), "/latest") {
			sel.groups[r.Group] = true
			continue
		}
		sel.refs = append(sel.refs, r)
	}
	return sel, nil
}

// resolve turns the snapshot references into snapshots.
func (sel duSel) resolve(s *store.Store) (map[store.Snapshot]bool, error) {
	snaps := map[store.Snapshot]bool{}
	for _, r := range sel.refs {
		snap, err := s.Resolve(r)
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", r, err)
		}
		snaps[snap] = true
	}
	return snaps, nil
}

// inNS reports whether g is in ns or below it.
func inNS(g store.Group, ns store.NS) bool {
	return ns == "" || g.NS == ns || strings.HasPrefix(string(g.NS), string(ns)+"/")
}

func (a *app) du(o duOpts, sel duSel) error {
	s, err := a.openStore()
	if err != nil {
		return err
	}
	defer s.Close()
	snaps, err := sel.resolve(s)
	if err != nil {
		return err
	}
	rep, err := usage.Compute(a.ctx, s, usage.Options{})
	if err != nil {
		return err
	}
	all := len(snaps) == 0 && len(sel.groups) == 0
	show := func(si store.SnapshotInfo) bool {
		if all {
			return inNS(si.Group, sel.ns)
		}
		return snaps[si.Snapshot] || sel.groups[si.Group]
	}
	out := usage.ListingOf(rep, show)
	if o.json {
		err = printJSON(a, out)
	} else {
		err = out.WriteText(a.stdout, o.groups)
	}
	if err != nil {
		return err
	}
	if len(out.Errors) > 0 {
		return &codeError{exitPartial, errors.New("du: some indexes or chunks could not be read (see errors above); their snapshots' figures leave them out")}
	}
	return nil
}
