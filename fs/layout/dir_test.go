package layout

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"syscall"
	"testing"
	"time"
)

// fakeLister lists what its test sets, counting the listings.
type fakeLister struct {
	es    []Entry
	err   error
	calls int
}

func (l *fakeLister) list(context.Context) ([]Entry, error) {
	l.calls++
	return slices.Clone(l.es), l.err
}

func dirEntry(name string, ino uint64) Entry {
	return Entry{Name: name, Kind: KindDir, Ino: ino, Mode: syscall.S_IFDIR}
}

// TestListingRefresh runs a directory's listing of a changing directory on a clock
// of its own, without a mount: it is listed again only once stale, sorted;
// a re-listing reports the names gone or moved to another inode and
// moves the time it changed, an unchanged one does not; a failed
// re-listing keeps the entries; a snapshot's listing (ttl 0) is listed
// once.
func TestListingRefresh(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	fl := &fakeLister{es: []Entry{dirEntry("b", 2), dirEntry("a", 1), dirEntry("latest", 10)}}
	l := NewDir("/host/x", time.Minute, fl.list, slog.New(slog.NewTextHandler(io.Discard, nil)))
	l.now = func() time.Time { return now }
	ctx := context.Background()
	load := func(step string) ([]string, []string) {
		t.Helper()
		es, gone, err := l.Load(ctx)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		var names []string
		for _, e := range es {
			names = append(names, e.Name)
		}
		return names, gone
	}
	if names, gone := load("first"); !slices.Equal(names, []string{"a", "b", "latest"}) || gone != nil {
		t.Fatalf("first listing %v, gone %v", names, gone)
	}
	now = now.Add(59 * time.Second)
	fl.es = nil
	if names, _ := load("fresh"); fl.calls != 1 || len(names) != 3 {
		t.Fatalf("listed %d times while fresh, got %v", fl.calls, names)
	}
	if v, ch := l.Fresh(); v != time.Second || !ch.IsZero() {
		t.Fatalf("fresh for %v, changed %v", v, ch)
	}

	now = now.Add(time.Second) // stale: latest moved, b gone, c new
	fl.es = []Entry{dirEntry("c", 3), dirEntry("latest", 11), dirEntry("a", 1)}
	names, gone := load("changed")
	if fl.calls != 2 || !slices.Equal(names, []string{"a", "c", "latest"}) || !slices.Equal(gone, []string{"b", "latest"}) {
		t.Fatalf("re-listing %v (listed %d times), gone %v", names, fl.calls, gone)
	}
	if _, ch := l.Fresh(); !ch.Equal(now) {
		t.Fatalf("changed at %v, want %v", ch, now)
	}

	changed := now
	now = now.Add(time.Minute) // stale, the same names in another order
	fl.es = []Entry{dirEntry("latest", 11), dirEntry("c", 3), dirEntry("a", 1)}
	if _, gone := load("same"); gone != nil || fl.calls != 3 {
		t.Fatalf("an unchanged re-listing reports %v gone (listed %d times)", gone, fl.calls)
	}
	if _, ch := l.Fresh(); !ch.Equal(changed) {
		t.Fatalf("an unchanged re-listing moved the change time to %v", ch)
	}

	now = now.Add(time.Minute)
	fl.err = errors.New("store unreachable")
	if names, gone := load("failed"); !slices.Equal(names, []string{"a", "c", "latest"}) || gone != nil {
		t.Fatalf("a failed re-listing shows %v, gone %v", names, gone)
	}

	snap := &fakeLister{es: []Entry{dirEntry("root.pxar", 5)}}
	s := NewDir("/host/x/t", 0, snap.list, nil)
	s.now = func() time.Time { return now }
	for range 3 {
		if _, _, err := s.Load(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Hour)
	}
	if snap.calls != 1 {
		t.Fatalf("a snapshot's listing was listed %d times", snap.calls)
	}
	bad := NewDir("/gone", time.Minute, (&fakeLister{err: errors.New("no")}).list, nil)
	if _, _, err := bad.Load(ctx); err == nil {
		t.Fatal("a first listing that fails gives no error")
	}
}
