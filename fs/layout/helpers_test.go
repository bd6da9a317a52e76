package layout

import (
	"context"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// newStore is an empty store of the test.
func newStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// at is the test's time sec seconds after its epoch.
func at(sec int) time.Time { return time.Unix(1_700_000_000+int64(sec), 0).UTC() }

// backup writes a finished snapshot of g at when (start).
func backup(t *testing.T, s *store.Store, g store.Group, when time.Time, tree bool) store.Snapshot {
	t.Helper()
	b := start(t, s, g, when, tree)
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

// start writes a snapshot of g at when holding a blob conf.blob and,
// with tree, an empty split file archive root.pxar, and leaves it in
// progress (aborted at the test's end unless finished).
func start(t *testing.T, s *store.Store, g store.Group, when time.Time, tree bool) *store.Backup {
	t.Helper()
	b, err := s.StartBackup(context.Background(), g, when)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := b.AddBlobData("conf.blob", []byte("memory: 2048\n")); err != nil {
		t.Fatal(err)
	}
	if tree {
		for _, name := range []string{"root.mpxar.didx", "root.ppxar.didx"} {
			w, err := index.NewDynamicWriter(filepath.Join(b.Dir(), name))
			if err != nil {
				t.Fatal(err)
			}
			csum, size, err := w.Close()
			if err == nil {
				err = b.AddFile(store.FileInfo{Filename: name, Size: uint64(size), Csum: store.CsumHex(csum)})
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(b.Abort)
	return b
}

// clock is a test's time, which its directories read.
type clock struct{ now time.Time }

func (c *clock) time() time.Time { return c.now }

// load lists d (on clock c, if given) and fails the test on an error.
func load(t *testing.T, d *Dir, c *clock) []Entry {
	t.Helper()
	if c != nil {
		d.now = c.time
	}
	es, _, err := d.Load(context.Background())
	if err != nil {
		t.Fatalf("list %s: %v", d.Path(), err)
	}
	return es
}

// names returns the names of es.
func names(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Name
	}
	return out
}

// child returns the directory of d's entry name, which must be one.
func child(t *testing.T, d *Dir, name string) *Dir {
	t.Helper()
	e, ok := Find(load(t, d, nil), name)
	if !ok || e.Kind != KindDir || e.Mode != syscall.S_IFDIR|0o555 {
		t.Fatalf("%s: %q is %+v (found %v), want a directory", d.Path(), name, e, ok)
	}
	return e.Dir()
}

// wantNames fails the test unless es has exactly the names want.
func wantNames(t *testing.T, what string, es []Entry, want ...string) {
	t.Helper()
	if got := names(es); !slices.Equal(got, want) {
		t.Fatalf("%s lists %q, want %q", what, got, want)
	}
}
