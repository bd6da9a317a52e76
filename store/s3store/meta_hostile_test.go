package s3store_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// A bucket holding objects no snapshot file could be (hostile keys, one
// too large for its kind): the refresh refuses each, naming its key,
// mirrors the rest and writes nothing outside the store's directory.
func TestRemoteRefreshHostileKeys(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	ctx := context.Background()
	good := backupAt(t, s, vm1, 1)
	bk := s3store.BucketOf(s)
	const tm = "2025-03-05T00:00:00Z"
	hostile := []string{
		"etc/passwd",                          // a top prefix of no snapshot
		"vm/1/" + tm + "/a/b.blob",            // too deep
		"vm/1/" + tm + "/.hidden",             // hidden file name
		"vm/1/not-a-time/x.blob",              // not a snapshot time
		"vm/bad id/" + tm + "/x.blob",         // not a backup id
		"vm/1/" + tm + "/..x/../y.blob",       // a dot-dot (as far as the server keeps it)
		"vm/1/" + tm + "/x.blob\\..\\..\\esc", // odd characters
		"vm/1/" + tm + "/x y.blob",            // a space
		"vm/1/" + tm + "/x\x01.blob",          // a control character
		"vm/1/" + tm + "/disk.img",            // neither an index nor a blob
		"ns/a/ns/b/ns/c/ns/d/ns/e/ns/f/ns/g/ns/h/vm/1/" + tm + "/x.blob", // namespaces too deep
	}
	var put []string
	for _, k := range hostile {
		if _, err := bk.Put(ctx, k, objstore.Cond{}, []byte("x")); err != nil {
			t.Logf("the server refuses key %q itself: %v", k, err)
			continue
		}
		put = append(put, k)
	}
	// too large for its kind: a marker (at most 4 KiB) and a manifest
	big := snapKey(store.Snapshot{Group: vm1, Time: at(7)}, store.ProtectedName)
	if _, err := bk.Put(ctx, big, objstore.Cond{}, bytes.Repeat([]byte{1}, 5000)); err != nil {
		t.Fatal(err)
	}
	put = append(put, big)
	bigManifest := snapKey(store.Snapshot{Group: vm1, Time: at(8)}, store.ManifestName)
	if _, err := bk.Put(ctx, bigManifest, objstore.Cond{}, bytes.Repeat([]byte{1}, 17<<20)); err != nil {
		t.Fatal(err)
	}
	put = append(put, bigManifest)
	if len(put) < 11 {
		t.Fatalf("only %d hostile keys could be put", len(put))
	}
	before := listTree(t, s.Root())
	err := s.Refresh(ctx)
	var re *s3store.RefreshError
	if !errors.As(err, &re) {
		t.Fatalf("refresh of a hostile bucket: %v", err)
	}
	for _, k := range put {
		want := k
		if i := strings.IndexByte(k, '/'); k == "etc/passwd" && i > 0 {
			want = k[:i+1] // refused as a whole prefix
		}
		want = strings.ReplaceAll(want, "\x01", "?") // shown printable
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refresh's error does not name %q: %v", want, err)
		}
	}
	for p := range listTree(t, s.Root()) {
		if !before[p] {
			t.Errorf("the refresh made %s", p)
		}
	}
	if !finished(t, s, good) {
		t.Fatal("the good snapshot is gone")
	}
	// the store still opens (the refusals are logged)
	if s2, err := store.Open(s.Root()); err != nil {
		t.Fatalf("open with a hostile bucket: %v", err)
	} else {
		s2.Close()
	}
}

// A symlink in the local directory where the mirror would go is never
// followed: the refresh refuses that snapshot and writes nothing there.
func TestRemoteRefreshLocalSymlink(t *testing.T) {
	h1, h2 := twoHosts(t)
	backupAt(t, h1, store.Group{Type: store.TypeCT, ID: "9"}, 1)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(h2.Root(), "ct")); err != nil {
		t.Fatal(err)
	}
	err := h2.Refresh(context.Background())
	var re *s3store.RefreshError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "not a directory") {
		t.Fatalf("refresh through a symlink: %v", err)
	}
	if names, _ := os.ReadDir(outside); len(names) != 0 {
		t.Fatalf("the refresh wrote %d entries through the symlink", len(names))
	}
}

// listTree returns every path under root.
func listTree(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			out[p] = true
		}
		return nil
	})
	return out
}

// Two hosts on a store under a key prefix see each other's snapshots
// and nothing of the bucket outside the prefix (another store's keys).
func TestRemoteRefreshUnderPrefix(t *testing.T) {
	srv := miniotest.Start(t)
	cfg := s3store.Config{Config: srv.Config(srv.NewBucket(t))}
	cfg.Prefix = "team/store"
	cfg.CredentialsFile = storetest.CredentialsFile(t, srv)
	h1 := storetest.AttachRemoteStore(t, cfg)
	h2 := storetest.AttachRemoteStore(t, cfg)
	snap := backupAt(t, h1, vm1, 1)
	// a snapshot file of another store, at the bucket's top
	other := cfg
	other.Prefix = ""
	ob, err := objstore.Open(context.Background(), other.Config, srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	foreign := store.Snapshot{Group: vm1, Time: at(5)}
	if _, err := ob.Put(context.Background(), snapKey(foreign, "x.blob"), objstore.Cond{}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	refresh(t, h2)
	if !finished(t, h2, snap) {
		t.Fatal("host 2 does not see host 1's snapshot under the prefix")
	}
	if _, err := os.Stat(h2.SnapshotPath(foreign)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("host 2 mirrored a key outside its prefix: %v", err)
	}
}
