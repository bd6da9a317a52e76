package objstore_test

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

func open(t *testing.T) (*objstore.Bucket, *miniotest.Server, objstore.Config) {
	t.Helper()
	srv := miniotest.Start(t)
	b, cfg := srv.OpenBucket(t, objstore.Options{})
	return b, srv, cfg
}

// reopen opens cfg's bucket again: another client, as another host's.
func reopen(t *testing.T, srv *miniotest.Server, cfg objstore.Config, opt objstore.Options) *objstore.Bucket {
	t.Helper()
	b, err := objstore.Open(context.Background(), cfg, srv.Credentials(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Put, Head and Get of an object sent as several parts; Get reuses the
// caller's buffer and refuses an object over its limit before reading it.
func TestPutGetHead(t *testing.T) {
	b, _, _ := open(t)
	ctx := context.Background()
	info, err := b.Put(ctx, "a/b", objstore.Cond{}, []byte("hello "), []byte("world"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != 11 || info.ETag == "" || info.Key != "a/b" {
		t.Fatalf("put info %+v", info)
	}
	buf := make([]byte, 0, 64)
	data, gi, err := b.Get(ctx, "a/b", 11, buf)
	if err != nil || string(data) != "hello world" {
		t.Fatalf("get %q, %v", data, err)
	}
	if &data[0] != &buf[:1][0] {
		t.Error("Get did not reuse the buffer")
	}
	if gi.ETag != info.ETag || gi.Size != 11 || gi.LastModified.IsZero() {
		t.Fatalf("get info %+v, put info %+v", gi, info)
	}
	hi, err := b.Head(ctx, "a/b")
	if err != nil || hi.ETag != info.ETag || hi.Size != 11 || !hi.LastModified.Equal(gi.LastModified) {
		t.Fatalf("head %+v, %v", hi, err)
	}
	_, _, err = b.Get(ctx, "a/b", 10, nil)
	if !errors.Is(err, objstore.ErrTooLarge) || !strings.Contains(err.Error(), "a/b") {
		t.Fatalf("get over the limit: %v", err)
	}
	for _, op := range []func() error{
		func() error { _, _, err := b.Get(ctx, "missing", 10, nil); return err },
		func() error { _, err := b.Head(ctx, "missing"); return err },
		func() error { _, err := b.Touch(ctx, "missing"); return err },
	} {
		err := op()
		if !errors.Is(err, objstore.ErrNotExist) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing") {
			t.Errorf("missing key: %v", err)
		}
	}
	// An empty object.
	if _, err := b.Put(ctx, "empty", objstore.Cond{}); err != nil {
		t.Fatal(err)
	}
	if data, _, err := b.Get(ctx, "empty", 0, nil); err != nil || len(data) != 0 {
		t.Fatalf("empty: %q %v", data, err)
	}
}

// Conditional puts: IfAbsent creates only, IfMatch replaces only the
// version named; of many concurrent IfAbsent puts exactly one wins.
func TestConditionalPut(t *testing.T) {
	b, _, _ := open(t)
	ctx := context.Background()
	first, err := b.Put(ctx, "k", objstore.Cond{IfAbsent: true}, []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "k", objstore.Cond{IfAbsent: true}, []byte("2")); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("IfAbsent on an existing key: %v", err)
	}
	second, err := b.Put(ctx, "k", objstore.Cond{IfMatch: first.ETag}, []byte("2"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Put(ctx, "k", objstore.Cond{IfMatch: first.ETag}, []byte("3")); !errors.Is(err, objstore.ErrPrecondition) {
		t.Fatalf("IfMatch on a stale ETag: %v", err)
	}
	if data, _, _ := b.Get(ctx, "k", 10, nil); string(data) != "2" || second.ETag == first.ETag {
		t.Fatalf("after the puts: %q", data)
	}
	if _, err := b.Put(ctx, "nokey", objstore.Cond{IfMatch: first.ETag}, []byte("x")); err == nil {
		t.Fatal("IfMatch on a missing key succeeded")
	}

	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = b.Put(ctx, "race", objstore.Cond{IfAbsent: true}, []byte{byte('a' + i)})
		})
	}
	wg.Wait()
	won := 0
	for i, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, objstore.ErrPrecondition):
			t.Errorf("put %d: %v", i, err)
		}
	}
	if won != 1 {
		t.Fatalf("%d concurrent IfAbsent puts won, want 1 (%v)", won, errs)
	}
}

// Touch moves LastModified forward and keeps the data.
func TestTouch(t *testing.T) {
	b, _, _ := open(t)
	ctx := context.Background()
	if _, err := b.Put(ctx, "c", objstore.Cond{}, []byte("data")); err != nil {
		t.Fatal(err)
	}
	before, err := b.Head(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // LastModified has a second's resolution in HTTP dates
	ti, err := b.Touch(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	after, err := b.Head(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	if !after.LastModified.After(before.LastModified) || !ti.LastModified.After(before.LastModified) {
		t.Fatalf("touch: LastModified %v -> %v (touch said %v)", before.LastModified, after.LastModified, ti.LastModified)
	}
	if data, _, err := b.Get(ctx, "c", 10, nil); err != nil || string(data) != "data" || after.Size != 4 {
		t.Fatalf("after touch: %q %v", data, err)
	}
	if st := b.ServerTime(); st.Before(after.LastModified.Add(-2 * time.Second)) {
		t.Fatalf("ServerTime %v before the object's LastModified %v", st, after.LastModified)
	}
}

// Delete removes many keys in batches; missing keys are no error.
func TestDeleteMany(t *testing.T) {
	b, _, _ := open(t)
	ctx := context.Background()
	var keys []string
	for i := range 1005 {
		k := "d/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strconv.Itoa(i)
		keys = append(keys, k)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, k := range keys {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, err := b.Put(ctx, k, objstore.Cond{}, []byte(k)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if _, err := b.Put(ctx, "keep", objstore.Cond{}, nil); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, append(keys, "never-was")...); err != nil {
		t.Fatal(err)
	}
	var left []string
	for o, err := range b.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, o.Key)
	}
	if len(left) != 1 || left[0] != "keep" {
		t.Fatalf("left after delete: %v", left)
	}
}
