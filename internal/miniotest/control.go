package miniotest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cairnfs/cairn/store/objstore"
)

// Stop stops the server, keeping its data and port for Restart. Stopping
// a stopped server does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	s.stdin.Close()
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill() //nolint:errcheck // the wrapper did not stop MinIO in time
		<-s.exited
	}
	s.cmd, s.stdin, s.exited = nil, nil, nil
}

// Restart starts a stopped server again on the same port and data.
func (s *Server) Restart() error {
	return s.start()
}

// Config is the objstore configuration of bucket on this server.
func (s *Server) Config(bucket string) objstore.Config {
	return objstore.Config{
		Endpoint:  s.Endpoint,
		Bucket:    bucket,
		Region:    "us-east-1",
		PathStyle: true,
	}
}

// Credentials are the server's root keys.
func (s *Server) Credentials() objstore.Credentials {
	return objstore.Credentials{AccessKey: s.AccessKey, SecretKey: s.SecretKey}
}

// Client is a minio-go client of the server with its root keys (for
// what tests do behind objstore's back).
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	client, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds:  credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region: "us-east-1",
	})
	if err != nil {
		t.Fatalf("miniotest: client: %v", err)
	}
	return client
}

// NewBucket creates a bucket with a fresh random name and returns it.
func (s *Server) NewBucket(t testing.TB) string {
	t.Helper()
	name := "t-" + strings.ToLower(randomHex(8))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Client(t).MakeBucket(ctx, name, minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("miniotest: making bucket %s: %v", name, err)
	}
	return name
}

// RemoveBucket removes a bucket and everything in it.
func (s *Server) RemoveBucket(t testing.TB, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Client(t).RemoveBucketWithOptions(ctx, name, minio.RemoveBucketOptions{ForceDelete: true}); err != nil {
		t.Fatalf("miniotest: removing bucket %s: %v", name, err)
	}
	// MinIO answers the forced removal before every part of it is done:
	// a GET right after it has still found an object. Return once the
	// server says the bucket is gone.
	for {
		exists, err := s.Client(t).BucketExists(ctx, name)
		if err == nil && !exists {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("miniotest: bucket %s still there after its removal (%v)", name, err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// OpenBucket makes a fresh bucket and opens it with opt.
func (s *Server) OpenBucket(t testing.TB, opt objstore.Options) (*objstore.Bucket, objstore.Config) {
	t.Helper()
	cfg := s.Config(s.NewBucket(t))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := objstore.Open(ctx, cfg, s.Credentials(), opt)
	if err != nil {
		t.Fatalf("miniotest: opening %s: %v", cfg.Bucket, err)
	}
	return b, cfg
}

// String names the server (never its keys).
func (s *Server) String() string { return fmt.Sprintf("minio at %s", s.Endpoint) }
