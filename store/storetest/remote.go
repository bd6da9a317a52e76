package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
	"github.com/cairnfs/cairn/store/s3store"
)

// NewRemoteStore creates a remote store on a fresh bucket of the test
// process's MinIO server (miniotest: the test skips without a MinIO
// binary unless CAIRN_TEST_REQUIRE_MINIO=1), in a directory of the
// test's own, closed when the test ends. The keys are in a 0600
// credentials file beside it (no environment variable is changed).
func NewRemoteStore(t testing.TB) *store.Store {
	t.Helper()
	s, _ := NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	return s
}

// NewRemoteStoreOn is NewRemoteStore on server srv, with cfg's
// CacheSize and, when it names one, its bucket (else a fresh bucket of
// srv: bucket, endpoint, region and path style are filled in); it also
// returns the configuration, for a second store directory on the same
// bucket (AttachRemoteStore).
func NewRemoteStoreOn(t testing.TB, srv *miniotest.Server, cfg s3store.Config) (*store.Store, s3store.Config) {
	t.Helper()
	if cfg.Bucket == "" {
		cfg.Config = srv.Config(srv.NewBucket(t))
	}
	cfg.CredentialsFile = CredentialsFile(t, srv)
	return AttachRemoteStore(t, cfg), cfg
}

// AttachRemoteStore creates a store directory of the test's own for the
// bucket cfg names (creating the store there, or attaching to it).
func AttachRemoteStore(t testing.TB, cfg s3store.Config) *store.Store {
	t.Helper()
	s, err := s3store.Create(context.Background(), filepath.Join(t.TempDir(), "store"), cfg, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// CredentialsFile writes srv's keys into a 0600 file of the test's own
// and returns its name.
func CredentialsFile(t testing.TB, srv *miniotest.Server) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "s3-credentials")
	c := srv.Credentials()
	data := fmt.Sprintf("AWS_ACCESS_KEY_ID=%s\nAWS_SECRET_ACCESS_KEY=%s\n", c.AccessKey, c.SecretKey)
	if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// NewMemStore creates a remote store on a fresh in-memory bucket
// (memstore: no server, fault injection through its hook), in a
// directory of the test's own, closed when the test ends.
func NewMemStore(t testing.TB) (*store.Store, *memstore.Bucket) {
	t.Helper()
	b := memstore.New(objstore.Config{Bucket: "mem"})
	return AttachMemStore(t, b), b
}

// AttachMemStore creates a store directory of the test's own for the
// in-memory bucket b (creating the store there, or attaching to it): a
// second host on the same bucket.
func AttachMemStore(t testing.TB, b *memstore.Bucket) *store.Store {
	t.Helper()
	cfg := s3store.Config{Config: objstore.Config{Endpoint: "http://memstore.invalid", Bucket: b.Config().Bucket}}
	s, err := s3store.CreateOn(context.Background(), filepath.Join(t.TempDir(), "store"), cfg, b, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// RegisteredWriters is how many writers the writer registry of the
// in-memory bucket b names.
func RegisteredWriters(t testing.TB, b *memstore.Bucket) int {
	t.Helper()
	data, _, err := b.Get(context.Background(), ".cairn/writers.json", 16<<20, nil)
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		Writers []string `json:"writers"`
	}
	if err := json.Unmarshal(data, &reg); err != nil {
		t.Fatal(err)
	}
	return len(reg.Writers)
}
