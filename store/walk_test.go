package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// walkSnapshot makes one snapshot of g at day (of June 2024), with a
// manifest when finished, as a backup that died before Finish leaves it
// otherwise.
func walkSnapshot(t *testing.T, s *Store, g Group, day int, finished bool) string {
	t.Helper()
	b, err := s.StartBackup(context.Background(), g, time.Date(2024, 6, day, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddBlob("notes.blob", mustBlob([]byte("walk"))); err != nil {
		t.Fatal(err)
	}
	if finished {
		err = b.Finish()
	} else {
		b.unlock()
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Snapshot().String()
}

// walkFixture is a store with nested namespaces, an empty group and an
// unfinished snapshot; it returns the snapshots in walk order, "!" after
// the unfinished one.
func walkFixture(t *testing.T) (*Store, []string) {
	s := testStore(t)
	var want []string
	add := func(ns NS, typ, id string, day int, finished bool) {
		name := walkSnapshot(t, s, Group{NS: ns, Type: typ, ID: id}, day, finished)
		if !finished {
			name += "!"
		}
		want = append(want, name)
	}
	add("", TypeCT, "7", 1, true)
	add("", TypeVM, "100", 1, true)
	add("", TypeVM, "100", 2, false)
	add("", TypeVM, "100", 3, true)
	add("a", TypeHost, "h", 1, true)
	add("a/b", TypeVM, "1", 4, true)
	add("a/b/c", TypeVM, "1", 5, true)
	add("z", TypeCT, "9", 1, true)
	// a group without snapshots (all pruned) and a namespace without groups
	if err := os.MkdirAll(s.GroupPath(Group{NS: "a", Type: TypeVM, ID: "empty"}), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(s.Root(), "ns", "a", "ns", "nogroups"), 0o755); err != nil {
		t.Fatal(err)
	}
	return s, want
}

func walkNames(t *testing.T, s *Store, sel Selector) (names []string, errs []error) {
	t.Helper()
	for si, err := range s.Walk(context.Background(), sel) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n := si.String()
		if !si.Finished {
			n += "!"
		}
		names = append(names, n)
	}
	return names, errs
}

func TestWalkNamespaceTree(t *testing.T) {
	s, all := walkFixture(t)
	under := func(prefix string) []string {
		var out []string
		for _, n := range all {
			if strings.HasPrefix(n, prefix) {
				out = append(out, n)
			}
		}
		return out
	}
	for _, tc := range []struct {
		ns   NS
		want []string
	}{
		{"", all},
		{"a", under("ns/a/")},
		{"a/b", under("ns/a/ns/b/")},
		{"a/nogroups", nil},
		{"missing", nil},
	} {
		got, errs := walkNames(t, s, Selector{NS: tc.ns})
		if len(errs) > 0 || !slices.Equal(got, tc.want) {
			t.Errorf("ns %q: got %v (errors %v), want %v", tc.ns, got, errs, tc.want)
		}
	}
	got, _ := walkNames(t, s, Selector{NS: "", NewestFirst: true})
	want := []string{all[0], all[3], all[2], all[1]}
	if !slices.Equal(got[:4], want) {
		t.Errorf("newest first: %v, want %v", got[:4], want)
	}
}

func TestWalkRefs(t *testing.T) {
	s, all := walkFixture(t)
	sel, err := ParseSelector("a", []string{"vm/100", "", "host/h/latest", "ns/a/host/h/2024-06-01T00:00:00Z",
		"ns/a/vm/empty", "vm/100/2024-06-02T00:00:00Z", "ct/nothere/2024-06-01T00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	// "vm/100" is taken in namespace a, where it does not exist
	got, errs := walkNames(t, s, sel)
	if !slices.Equal(got, []string{all[4]}) {
		t.Errorf("refs: %v, want only %s once", got, all[4])
	}
	wantErrs := []error{ErrNotFound, ErrNotFound, ErrNotFound, ErrNotFound}
	if len(errs) != len(wantErrs) {
		t.Fatalf("errors %v", errs)
	}
	for i, e := range errs {
		if !errors.Is(e, wantErrs[i]) || !strings.HasPrefix(e.Error(), "snapshot "+sel.Refs[[]int{0, 3, 4, 5}[i]].String()+":") {
			t.Errorf("error %d: %v", i, e)
		}
	}
	sel, _ = ParseSelector("", []string{"vm/100/2024-06-02T00:00:00Z", "vm/100", "vm/100/2024-06-03T00:00:00Z"})
	got, errs = walkNames(t, s, sel)
	if !slices.Equal(got, []string{all[3]}) || len(errs) != 1 || !errors.Is(errs[0], ErrUnfinished) {
		t.Errorf("unfinished ref: %v %v", got, errs)
	}
	if back, _ := ParseSelector("", sel.RefStrings()); !slices.Equal(back.RefStrings(), sel.RefStrings()) ||
		sel.RefStrings()[1] != "vm/100/latest" {
		t.Errorf("round trip: %v", sel.RefStrings())
	}
}

func TestParseSelectorBad(t *testing.T) {
	for _, tc := range []struct {
		ns   NS
		refs []string
		want string
	}{
		{"../x", nil, `namespace "../x"`},
		{"a/../../b", nil, `namespace "a/../../b"`},
		{"1/2/3/4/5/6/7/8", nil, "deeper"},
		{"", []string{"vm"}, `snapshot "vm"`},
		{"", []string{"vm/1/yesterday"}, "yesterday"},
		{"", []string{"disk/1"}, "backup type"},
		{"", []string{"ns/../vm/1"}, "namespace"},
		{"", []string{"vm/1/2/3"}, `snapshot "vm/1/2/3"`},
	} {
		_, err := ParseSelector(tc.ns, tc.refs)
		if !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ns %q refs %q: %v, want %q", tc.ns, tc.refs, err, tc.want)
		}
	}
	// a selector made without ParseSelector is checked by Walk too
	for _, err := range testStore(t).Walk(context.Background(), Selector{NS: "../.."}) {
		if !errors.Is(err, ErrBadName) {
			t.Errorf("walk ../..: %v", err)
		}
	}
}

func TestWalkErrors(t *testing.T) {
	s, all := walkFixture(t)
	// a group directory that cannot be listed: the walk says which and goes on
	bad := s.GroupPath(Group{Type: TypeVM, ID: "100"})
	if err := os.RemoveAll(bad); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, errs := walkNames(t, s, Selector{})
	want := slices.Concat(all[:1], all[4:])
	if !slices.Equal(got, want) || len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), "group vm/100: ") {
		t.Errorf("unlistable group: %v %v", got, errs)
	}
	// a namespace directory that cannot be listed ends the walk
	nsDir := filepath.Join(s.Root(), "ns", "z")
	os.RemoveAll(nsDir)
	os.WriteFile(nsDir, nil, 0o644)
	if got, errs := walkNames(t, s, Selector{}); len(got) != 0 || len(errs) != 1 {
		t.Errorf("unlistable namespace: %v %v", got, errs)
	}
}

func TestWalkStops(t *testing.T) {
	s, all := walkFixture(t)
	n := 0
	for si, err := range s.Walk(context.Background(), Selector{}) {
		if err != nil || !si.Finished {
			t.Fatal(si, err)
		}
		if n++; n == 2 {
			break // yield must not be called again (the runtime panics if it is)
		}
	}
	sel, _ := ParseSelector("", []string{"vm/100", "ct/7/latest"})
	for range s.Walk(context.Background(), sel) {
		break
	}
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	for si, err := range s.Walk(ctx, Selector{}) {
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled walk: %v", err)
			}
			got = append(got, "cancelled")
			continue
		}
		got = append(got, si.String())
		cancel()
	}
	// cancelled after the first group: its one snapshot, then the error, once
	if !slices.Equal(got, []string{all[0], "cancelled"}) {
		t.Errorf("cancelled walk: %v", got)
	}
	cancel()
}
