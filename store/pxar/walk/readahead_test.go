package walk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

// raTree makes a tree for the read-ahead tests: RichTree, exclude
// patterns, names whose byte order differs from walk order, and many
// files of assorted sizes.
func raTree(t *testing.T) string {
	root := t.TempDir()
	storetest.RichTree(t, root)
	writeFile(t, root+"/ex/.pxarexclude", "*.tmp\n!keep.tmp\nlogs/\n")
	writeFile(t, root+"/ex/a.tmp", "excluded")
	writeFile(t, root+"/ex/keep.tmp", "kept")
	writeFile(t, root+"/ex/logs/l", "excluded")
	for _, n := range []string{"o/x", "o.c", "o-d/y", "o0"} {
		writeFile(t, root+"/"+n, n)
	}
	for i := range 120 {
		size := []int{0, 1, 4095, 9000, 40_000}[i%5] // above and below the limits tried; larger only costs time (-race)
		writeFile(t, fmt.Sprintf("%s/many/d%02d/f%03d", root, i%7, i), string(storetest.RandSeeded(size, uint64(i))))
	}
	return root
}

func fdCount(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	must(t, err)
	return len(ents)
}

// The archive is the same byte for byte with and without the helper,
// whatever its limits, in both archive forms, with and without a Reuse
// hook (stat-ahead only); every descriptor it opened is closed.
func TestReadAheadSameArchive(t *testing.T) {
	root := raTree(t)
	never := func(context.Context, *pxar.Encoder, *Candidate) (pxar.LinkOffset, bool, error) { return 0, false, nil }
	limits := []ReadAhead{{}, {Entries: 1, Bytes: 1, Workers: 1}, {Entries: 3, Bytes: 5000, Workers: 3},
		{ChangedSince: time.Unix(1, 0)}}
	fds := fdCount(t)
	for _, split := range []bool{true, false} {
		for _, reuse := range []ReuseFunc{nil, never} {
			if !split && reuse != nil {
				continue // the reading path is the same; the Reuse hook runs for both
			}
			base := Options{Exclude: []string{"*.o"}, Reuse: reuse, ReadAhead: ReadAhead{Off: true}}
			_, st0, m0, p0 := walkTo(t, root, split, base)
			if st0.Files < 100 || st0.Errors != 0 {
				t.Fatalf("reference walk: %+v", st0)
			}
			for i, lim := range limits {
				if i > 1 && !(split && reuse == nil) {
					continue // the odd limits once: the race detector makes each walk cost seconds
				}
				o := base
				o.ReadAhead = lim
				o.ReadAhead.StatAhead = reuse != nil
				_, st, m, p := walkTo(t, root, split, o)
				if st != st0 || !bytes.Equal(m, m0) || !bytes.Equal(p, p0) {
					t.Errorf("split=%v reuse=%v %+v: archive differs (stats %+v, want %+v)", split, reuse != nil, lim, st, st0)
				}
			}
		}
	}
	if n := fdCount(t); n != fds {
		t.Errorf("%d descriptors open after the walks, %d before", n, fds)
	}
}

// The helper runs ahead of a walk that stands still, up to its entry
// and byte limits, and no further.
func TestReadAheadBounded(t *testing.T) {
	root := t.TempDir()
	for i := range 40 {
		writeFile(t, fmt.Sprintf("%s/f%02d", root, i), string(storetest.RandSeeded(8000, uint64(i))))
	}
	never := func(context.Context, *pxar.Encoder, *Candidate) (pxar.LinkOffset, bool, error) { return 0, false, nil }
	for _, c := range []struct {
		lim   ReadAhead
		reuse ReuseFunc
	}{{ReadAhead{Entries: 8}, nil}, {ReadAhead{Entries: 100, Bytes: 20_000}, nil},
		{ReadAhead{Entries: 8, StatAhead: true, ChangedSince: time.Unix(1, 0)}, never}} {
		lim := c.lim
		var got *readAhead
		testStarted = func(r *readAhead) { got = r }
		first := true
		hook := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
			if first {
				first = false
				waitAdvised(t, got, lim)
			}
			checkBounds(t, got.win, lim)
			return CopyFile(ctx, enc, f)
		}
		walkTo(t, root, true, Options{File: hook, Reuse: c.reuse, ReadAhead: lim})
		testStarted = nil
		if n := got.advised.Load(); n < 2 {
			t.Errorf("%+v: %d files read ahead", lim, n)
		}
	}
}

// waitAdvised waits, while the walk stands at the first file, until the
// helper has asked for the content of two files ahead.
func waitAdvised(t *testing.T, r *readAhead, lim ReadAhead) {
	deadline := time.Now().Add(20 * time.Second) // a bound on a hang, not a measurement
	for r.advised.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%+v: the helper did not read ahead", lim)
		}
		time.Sleep(time.Millisecond)
	}
}

func checkBounds(t *testing.T, w *raWindow, lim ReadAhead) {
	lim = lim.withDefaults()
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.q) > lim.Entries || w.bytes > lim.Bytes {
		t.Errorf("%+v: window holds %d entries, %d bytes", lim, len(w.q), w.bytes)
	}
}

// Cancelling the walk stops the helper: Walk returns the cause and no
// descriptor stays open.
func TestReadAheadCancel(t *testing.T) {
	root := raTree(t)
	fds := fdCount(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	n := 0
	hook := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		if n++; n == 10 {
			cancel(stop)
		}
		return CopyFile(ctx, enc, f)
	}
	var mb, pb bytes.Buffer
	_, err := Walk(ctx, root, &mb, &pb, Options{File: hook})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("walk returned %v", err)
	}
	if got := fdCount(t); got != fds {
		t.Errorf("%d descriptors open after the walk, %d before", got, fds)
	}
}

// walkCmp orders paths as the walk visits them.
func TestWalkCmp(t *testing.T) {
	root := raTree(t)
	var seen []string
	hook := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		seen = append(seen, f.Path)
		return CopyFile(ctx, enc, f)
	}
	walkTo(t, root, true, Options{File: hook})
	if !slices.IsSortedFunc(seen, walkCmp) || len(seen) < 100 {
		t.Errorf("walk order is not walkCmp order: %q", seen)
	}
	for _, c := range [][2]string{{"a", "a/b"}, {"a/b", "a.c"}, {"a/z", "ab"}, {"o/x", "o-d"}, {"", "a"}} {
		if walkCmp(c[0], c[1]) >= 0 || walkCmp(c[1], c[0]) <= 0 {
			t.Errorf("walkCmp(%q, %q) wrong", c[0], c[1])
		}
	}
}

// An entry the helper reaches after the walk went past it takes no room
// in the window and is never held for the walk (it would hold a
// descriptor until the walk's next step); entries after it still are.
func TestWindowBehindWalk(t *testing.T) {
	w := newWindow(ReadAhead{}.withDefaults())
	w.pass("b/c")
	for _, p := range []string{"a", "b", "b/c"} {
		it := &raItem{path: p}
		if !w.push(it) || !w.stale(it) || w.offer(it, &raOpen{fd: -1}) || len(w.q) != 0 || w.open != 0 {
			t.Errorf("%s, behind the walk: queued %d, held %d", p, len(w.q), w.open)
		}
	}
	for _, p := range []string{"b/c/d", "b/d"} {
		it := &raItem{path: p}
		if !w.push(it) || w.stale(it) || !w.offer(it, &raOpen{fd: -1}) {
			t.Errorf("%s, ahead of the walk: not held", p)
		}
	}
	if o := w.pass("b/c/d"); o == nil || w.open != 1 {
		t.Errorf("the walk did not get b/c/d (held %d)", w.open)
	}
	w.close()
}
