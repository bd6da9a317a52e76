package layout

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

// TestRefreshAfterChange: the root's listing, on a clock of the test,
// shows a new type, group and namespace only once stale and drops a
// type whose last group went.
func TestRefreshAfterChange(t *testing.T) {
	s := newStore(t)
	backup(t, s, store.Group{Type: store.TypeVM, ID: "100"}, at(0), false)
	l := &Layout{Store: s, Refresh: time.Minute}
	c := &clock{now: at(1000)}
	root := l.NSDir("")
	wantNames(t, "the root", load(t, root, c), "vm")

	backup(t, s, store.Group{Type: store.TypeHost, ID: "web"}, at(0), false)
	backup(t, s, store.Group{NS: "dev", Type: store.TypeCT, ID: "1"}, at(0), false)
	c.now = c.now.Add(59 * time.Second)
	wantNames(t, "a fresh root", load(t, root, nil), "vm")
	c.now = c.now.Add(time.Second)
	wantNames(t, "a stale root", load(t, root, nil), "host", "ns", "vm")

	if _, err := s.ForgetGroup(context.Background(), store.Group{Type: store.TypeVM, ID: "100"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(s.Root(), store.TypeVM)); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	c.now = c.now.Add(time.Minute)
	es, gone, err := root.Load(context.Background())
	if err != nil || len(gone) != 1 || gone[0] != "vm" {
		t.Fatalf("after the last vm went: %v, gone %q, %v", names(es), gone, err)
	}

}

// TestRootLearned: a file archive's root, unknown when its snapshot was
// listed, is known to the same listing once read (the mount's snapshot
// directories are listed once: a node made after the kernel forgot the
// first then showed the placeholder, and opened the archive again for
// its attributes), and so is an image's data; either is learned once.
func TestRootLearned(t *testing.T) {
	s := newStore(t)
	snap := backup(t, s, store.Group{Type: store.TypeHost, ID: "x"}, at(0), true)
	l := &Layout{Store: s, Trees: true, Index: s.OpenListingIndex(slog.New(slog.NewTextHandler(io.Discard, nil)))}
	t.Cleanup(func() { l.Index.Close() })
	d := l.SnapshotDir(snap, store.ManifestStamp{})
	tree, ok := Find(load(t, d, nil), "root.pxar")
	if !ok || !tree.Lazy() || tree.Archive.Root() != nil {
		t.Fatalf("root.pxar before its root is read: %+v (found %v)", tree, ok)
	}
	root := store.RootAttr{Mode: syscall.S_IFDIR | 0o750, UID: 1000, GID: 100, Mtime: at(-60).UnixNano(), Nlink: 2}
	tree.Archive.LearnedRoot(root)
	tree.Archive.LearnedRoot(store.RootAttr{Mode: syscall.S_IFDIR | 0o700}) // a second open learns nothing new
	again, _ := Find(load(t, d, nil), "root.pxar")
	if again.Lazy() || again.Archive.Root() == nil || *again.Archive.Root() != root {
		t.Fatalf("root.pxar after its root was read: lazy %v, root %+v", again.Lazy(), again.Archive.Root())
	}

	blob, _ := Find(load(t, d, nil), "conf.blob")
	if _, known := blob.Archive.Data(); known {
		t.Fatal("an archive's data known before it was learned")
	}
	blob.Archive.LearnedData(4096)
	if data, known := blob.Archive.Data(); !known || data != 4096 {
		t.Fatalf("data %d (known %v) after it was learned", data, known)
	}
}
