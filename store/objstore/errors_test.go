package objstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// Wrong keys, a missing bucket, a bad configuration: a clear error of its
// class, naming the bucket, and never showing a secret.
func TestOpenErrors(t *testing.T) {
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	ctx := context.Background()
	opt := objstore.Options{Retries: 1, RetryBase: time.Millisecond}
	good := srv.Credentials()
	wrongSecret := objstore.Credentials{AccessKey: good.AccessKey, SecretKey: "wrong-secret-" + good.SecretKey}
	unknownKey := objstore.Credentials{AccessKey: "nosuchkey", SecretKey: "another-secret-value"}
	for _, tc := range []struct {
		name   string
		cfg    objstore.Config
		cred   objstore.Credentials
		class  error
		secret string
	}{
		{"wrong secret", srv.Config(bucket), wrongSecret, objstore.ErrAccessDenied, wrongSecret.SecretKey},
		{"unknown key", srv.Config(bucket), unknownKey, objstore.ErrAccessDenied, unknownKey.SecretKey},
		{"missing bucket", srv.Config("no-such-bucket-here"), good, objstore.ErrNoBucket, good.SecretKey},
	} {
		_, err := objstore.Open(ctx, tc.cfg, tc.cred, opt)
		if !errors.Is(err, tc.class) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.class)
			continue
		}
		msg := err.Error()
		t.Logf("%s: %s", tc.name, msg)
		if !strings.Contains(msg, tc.cfg.Bucket) || strings.Contains(msg, tc.secret) {
			t.Errorf("%s: message %q (must name the bucket, not the secret)", tc.name, msg)
		}
	}
	for _, cfg := range []objstore.Config{
		{Endpoint: "ftp://x", Bucket: "b"},
		{Endpoint: "http://user:pass@127.0.0.1:1", Bucket: "b"},
		{Endpoint: "http://127.0.0.1:1/path", Bucket: "b"},
		{Endpoint: srv.Endpoint, Bucket: "Bad_Bucket"},
		{Endpoint: srv.Endpoint, Bucket: ""},
		{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "a//b"},
		{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "/a"},
		{Endpoint: srv.Endpoint, Bucket: bucket, Prefix: "a/../b"},
	} {
		if _, err := objstore.Open(ctx, cfg, good, opt); err == nil || strings.Contains(err.Error(), "pass@") {
			t.Errorf("config %+v: %v", cfg, err)
		}
	}
	if _, err := objstore.Open(ctx, srv.Config(bucket), objstore.Credentials{}, opt); err == nil {
		t.Error("empty credentials accepted")
	}
	// A bucket opened with good keys, used with an object key that is
	// refused.
	b, _ := srv.OpenBucket(t, opt)
	if _, err := b.Put(ctx, "", objstore.Cond{}, nil); err == nil {
		t.Error("empty key accepted")
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct{ url, bucket, prefix string }{
		{"s3://bucket", "bucket", ""},
		{"s3://bucket/", "bucket", ""},
		{"s3://my-bucket/prefix/x", "my-bucket", "prefix/x"},
		{"s3://my.bucket/a/b/", "my.bucket", "a/b"},
	} {
		b, p, err := objstore.ParseURL(tc.url)
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%s: %q %q %v", tc.url, b, p, err)
		}
	}
	for _, bad := range []string{
		"", "bucket", "http://bucket/x", "s3://", "s3:///x", "s3://Bad_Bucket/x", "s3://ab",
		"s3://bucket/a//b", "s3://bucket//a", "s3://bucket/a/../b", "s3://bucket/..", "s3://bucket/a?x=1",
		"s3://bucket/a\x00b", "s3://bucket/a/./b",
	} {
		if b, p, err := objstore.ParseURL(bad); err == nil {
			t.Errorf("%q accepted: %q %q", bad, b, p)
		}
	}
}

// Get of an object over the limit, a missing key, a missing bucket after
// Open (removed behind the client's back): each its class.
func TestObjectErrors(t *testing.T) {
	b, srv, cfg := open(t)
	ctx := context.Background()
	if _, err := b.Put(ctx, "big", objstore.Cond{}, make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	_, _, err := b.Get(ctx, "big", 999, nil)
	var e *objstore.Error
	if !errors.Is(err, objstore.ErrTooLarge) || !errors.As(err, &e) || e.Key != "big" || e.Bucket != cfg.Bucket {
		t.Fatalf("too large: %v", err)
	}
	if !strings.Contains(err.Error(), "1000") {
		t.Fatalf("too large message %q does not give the size", err)
	}
	srv.RemoveBucket(t, cfg.Bucket)
	for _, op := range []func() error{
		func() error { _, _, err := b.Get(ctx, "big", 1000, nil); return err },
		func() error { _, err := b.Put(ctx, "x", objstore.Cond{}, []byte("x")); return err },
		func() error { _, err := b.ListDirs(ctx, ""); return err },
	} {
		if err := op(); !errors.Is(err, objstore.ErrNoBucket) || !strings.Contains(err.Error(), cfg.Bucket) {
			t.Errorf("after the bucket's removal: %v", err)
		}
	}
}
