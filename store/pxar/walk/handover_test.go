package walk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

// handoverTree makes "a" (the walk's first file) and n files in z/
// (with an empty z/.pxarexclude).
func handoverTree(t *testing.T, n int) string {
	root := t.TempDir()
	writeFile(t, root+"/a", "first")
	writeFile(t, root+"/z/.pxarexclude", "")
	for i := range n {
		writeFile(t, fmt.Sprintf("%s/z/f%02d.dat", root, i), string(storetest.RandSeeded(1000+i, uint64(i))))
	}
	return root
}

// waitHeld waits until the helper holds n files of z/ open for the walk.
func waitHeld(t *testing.T, r *readAhead, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a bound on a hang, not a measurement
	for {
		held := 0
		r.win.mu.Lock()
		for _, it := range r.win.q {
			if it.open != nil && strings.HasPrefix(it.path, "z/") {
				held++
			}
		}
		r.win.mu.Unlock()
		if held >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper holds %d files, want %d", held, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// countOpens counts the opens of each regular file (helper and walk)
// until the returned function is called.
func countOpens() (map[string]int, func()) {
	var mu sync.Mutex
	opened := map[string]int{}
	testOpened = func(p string) {
		mu.Lock()
		opened[p]++
		mu.Unlock()
	}
	return opened, func() { testOpened = nil }
}

// pauseAtFirst returns a File hook that, at the walk's first file, waits
// until the helper holds n files, runs then (if not nil), and copies.
func pauseAtFirst(t *testing.T, got **readAhead, n int, then func()) FileFunc {
	first := true
	return func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		if first {
			first = false
			waitHeld(t, *got, n)
			if then != nil {
				then()
			}
		}
		return CopyFile(ctx, enc, f)
	}
}

// A file the helper opened ahead is not opened again by the walk: the
// walk takes over its descriptor (and the content the helper read of a
// small one), and the archive is the same as without the helper.
func TestReadAheadOpensOnce(t *testing.T) {
	const n = 30
	root := handoverTree(t, n)
	_, _, m0, p0 := walkTo(t, root, true, Options{ReadAhead: ReadAhead{Off: true}})
	fds := fdCount(t)
	var got *readAhead
	testStarted = func(r *readAhead) { got = r }
	defer func() { testStarted = nil }()
	opened, done := countOpens()
	_, st, m, p := walkTo(t, root, true, Options{File: pauseAtFirst(t, &got, n, nil)})
	done()
	if st.Files != n+2 || !bytes.Equal(m, m0) || !bytes.Equal(p, p0) {
		t.Errorf("archive differs from the walk without helper (stats %+v)", st)
	}
	for i := range n {
		if p := fmt.Sprintf("z/f%02d.dat", i); opened[p] != 1 {
			t.Errorf("%s opened %d times", p, opened[p])
		}
	}
	if got := fdCount(t); got != fds {
		t.Errorf("%d descriptors open after the walk, %d before", got, fds)
	}
	if k := got.preread.Load(); k < n {
		t.Errorf("the helper read %d files for the walk, want the %d it held", k, n)
	}
}

// Files the helper holds open and the walk does not take (excluded by a
// .pxarexclude changed meanwhile, removed before the walk listed their
// directory, or left when the walk ends early) are closed, and the walk
// stores what it finds, not what the helper saw.
func TestReadAheadHeldClosed(t *testing.T) {
	const n = 30
	stop := errors.New("stop")
	for _, c := range []struct {
		name   string
		change func(root string)
		check  func(t *testing.T, a *pxar.Accessor, st Stats, err error)
	}{
		{"excluded", func(root string) { writeFile(t, root+"/z/.pxarexclude", "f1*\n") },
			func(t *testing.T, a *pxar.Accessor, st Stats, err error) {
				if err != nil || st.Excluded != 10 || st.Files != n+2-10 {
					t.Errorf("walk: %v, stats %+v", err, st)
				}
			}},
		{"removed", func(root string) {
			for i := range 10 {
				must(t, os.Remove(fmt.Sprintf("%s/z/f%02d.dat", root, 2*i)))
			}
		}, func(t *testing.T, a *pxar.Accessor, st Stats, err error) {
			if err != nil || st.Files != n+2-10 || st.Errors != 0 {
				t.Errorf("walk: %v, stats %+v", err, st)
				return
			}
			if _, err := a.LookupPath(context.Background(), "z/f00.dat"); err == nil {
				t.Error("a file removed before the walk listed its directory was stored")
			}
		}},
		{"replaced", func(root string) {
			for i := range 10 {
				p := fmt.Sprintf("%s/z/f%02d.dat", root, 3*i)
				writeFile(t, p+".new", "new "+p)
				must(t, os.Rename(p+".new", p))
			}
		}, func(t *testing.T, a *pxar.Accessor, st Stats, err error) {
			if err != nil || st.Files != n+2 || st.Errors != 0 {
				t.Errorf("walk: %v, stats %+v", err, st)
				return
			}
			for i := range n {
				p := fmt.Sprintf("z/f%02d.dat", i)
				got := archived(t, a, p)
				switch {
				case i%3 == 0 && (!strings.HasPrefix(got, "new ") || !strings.HasSuffix(got, "/"+p)):
					t.Errorf("%s: not the file at its name when the walk listed z/ (the helper's, opened before the rename?)", p)
				case i%3 != 0 && got != string(storetest.RandSeeded(1000+i, uint64(i))):
					t.Errorf("%s: content differs", p)
				}
			}
		}},
		{"walk ends", nil, func(t *testing.T, _ *pxar.Accessor, _ Stats, err error) {
			if !errors.Is(err, stop) {
				t.Errorf("walk returned %v", err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := handoverTree(t, n)
			fds := fdCount(t)
			var got *readAhead
			testStarted = func(r *readAhead) { got = r }
			defer func() { testStarted = nil }()
			var change func()
			if c.change != nil {
				change = func() { c.change(root) }
			}
			hook := pauseAtFirst(t, &got, n, change)
			if c.change == nil {
				hook = func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
					waitHeld(t, got, n)
					return 0, stop
				}
			}
			var mb, pb bytes.Buffer
			st, err := Walk(context.Background(), root, &mb, &pb, Options{File: hook})
			var a *pxar.Accessor
			if err == nil {
				a, err = pxar.NewAccessor(context.Background(), bytes.NewReader(mb.Bytes()), int64(mb.Len()),
					bytes.NewReader(pb.Bytes()), int64(pb.Len()))
			}
			c.check(t, a, st, err)
			if got := fdCount(t); got != fds {
				t.Errorf("%d descriptors open after the walk, %d before", got, fds)
			}
		})
	}
}

// archived reads the content of the file at path in the archive.
func archived(t *testing.T, a *pxar.Accessor, path string) string {
	t.Helper()
	e, err := a.LookupPath(context.Background(), path)
	must(t, err)
	r, err := a.Open(context.Background(), e)
	must(t, err)
	b, err := io.ReadAll(r)
	must(t, err)
	return string(b)
}

// The helper holds no more files open than its limit, waiting for the
// walk instead.
func TestReadAheadHeldBounded(t *testing.T) {
	const n = 30
	root := handoverTree(t, n)
	var got *readAhead
	testStarted = func(r *readAhead) {
		got = r
		r.win.maxOpen = 5
	}
	defer func() { testStarted = nil }()
	hook := func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
		if f.Name == "a" {
			waitHeld(t, got, 5)
			time.Sleep(10 * time.Millisecond) // room for a helper that would go past the bound
		}
		got.win.mu.Lock()
		held := got.win.open
		got.win.mu.Unlock()
		if held > 5 {
			t.Errorf("at %s the helper holds %d files", f.Path, held)
		}
		return CopyFile(ctx, enc, f)
	}
	_, st, _, _ := walkTo(t, root, true, Options{File: hook})
	if st.Files != n+2 {
		t.Errorf("stats %+v", st)
	}
}
