package objstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// List yields keys in order, relative to the configured prefix, from
// startAfter; ListDirs the directories right under a prefix. Objects of
// another prefix in the same bucket are not seen.
func TestListAndPrefix(t *testing.T) {
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	ctx := context.Background()
	cfg := srv.Config(bucket)
	cfg.Prefix = "store/one"
	b, err := objstore.Open(ctx, cfg, srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	other := srv.Config(bucket)
	other.Prefix = "store/two"
	ob, err := objstore.Open(ctx, other, srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"ns/a/1", "ns/a/2", "ns/b/1", ".chunks/00ab/00abcd", ".chunks/ffee/ffeedd", "top"}
	for _, k := range keys {
		if _, err := b.Put(ctx, k, objstore.Cond{}, []byte(k)); err != nil {
			t.Fatal(err)
		}
		if _, err := ob.Put(ctx, k+"x", objstore.Cond{}, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix, after string) []string {
		var out []string
		for o, err := range b.List(ctx, prefix, after) {
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o.Key)
		}
		return out
	}
	sorted := slices.Sorted(slices.Values(keys))
	if got := list("", ""); !slices.Equal(got, sorted) {
		t.Fatalf("list all: %v, want %v", got, sorted)
	}
	if got := list("ns/", "ns/a/1"); !slices.Equal(got, []string{"ns/a/2", "ns/b/1"}) {
		t.Fatalf("list ns/ after ns/a/1: %v", got)
	}
	if got := list(".chunks/", ".chunks/00ab/00abcd"); !slices.Equal(got, []string{".chunks/ffee/ffeedd"}) {
		t.Fatalf("list chunks after the first: %v", got)
	}
	// Stopping early is fine.
	for range b.List(ctx, "", "") {
		break
	}
	dirs, err := b.ListDirs(ctx, "")
	if err != nil || !slices.Equal(dirs, []string{".chunks/", "ns/"}) {
		t.Fatalf("dirs of the root: %v %v", dirs, err)
	}
	dirs, err = b.ListDirs(ctx, "ns/")
	if err != nil || !slices.Equal(dirs, []string{"ns/a/", "ns/b/"}) {
		t.Fatalf("dirs of ns/: %v %v", dirs, err)
	}
	if data, _, err := b.Get(ctx, "top", 100, nil); err != nil || string(data) != "top" {
		t.Fatalf("get under the prefix: %q %v", data, err)
	}
}
