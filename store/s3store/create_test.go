package s3store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

// bucketKeys lists every key of cfg's bucket (under its prefix).
func bucketKeys(t *testing.T, srv *miniotest.Server, cfg objstore.Config) []string {
	t.Helper()
	b, err := objstore.Open(context.Background(), cfg, srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for info, err := range b.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, info.Key)
	}
	return keys
}

// TestCreateRemoteRefuses: wrong keys, a missing bucket, a bad cache
// size, a directory that holds a store: a clear error, never the
// secret, and nothing written locally or in the bucket.
func TestCreateRemoteRefuses(t *testing.T) {
	ctx := context.Background()
	srv := miniotest.Start(t)
	good := Config{Config: srv.Config(srv.NewBucket(t))}
	good.CredentialsFile = writeCreds(t, srv.Credentials())
	wrong := srv.Credentials()
	wrong.SecretKey = "wrong-secret-" + wrong.SecretKey[:4]
	wrongKeys := good
	wrongKeys.CredentialsFile = writeCreds(t, wrong)
	noBucket := good
	noBucket.Bucket = "no-such-bucket-here"
	badCache := good
	badCache.CacheSize = -1
	local := filepath.Join(t.TempDir(), "local")
	if _, err := store.CreateWith(local, store.CreateOptions{LazyPrefixDirs: true}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dir string
		cfg       Config
		want      string
		is        error
	}{
		{"wrong keys", "", wrongKeys, good.Bucket, objstore.ErrAccessDenied},
		{"no bucket", "", noBucket, noBucket.Bucket, objstore.ErrNoBucket},
		{"negative cache", "", badCache, "negative", nil},
		{"local store there", local, good, ".chunks", store.ErrExists},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = filepath.Join(t.TempDir(), "store")
			}
			s, err := Create(ctx, dir, tc.cfg, store.CreateOptions{})
			if err == nil {
				s.Close()
				t.Fatal("created")
			}
			t.Log(err)
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("error %q: want it to name %q (and be %v)", err, tc.want, tc.is)
			}
			if strings.Contains(err.Error(), wrong.SecretKey) || strings.Contains(err.Error(), srv.SecretKey) {
				t.Fatalf("error shows a secret: %q", err)
			}
			if tc.dir == "" {
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%s written: %v", dir, err)
				}
			}
			if keys := bucketKeys(t, srv, good.Config); len(keys) != 0 {
				t.Fatalf("bucket written: %q", keys)
			}
		})
	}
}

// TestCreateRemoteAttach: a second directory on the same bucket prefix
// attaches to the store (and sees its chunks); a prefix that holds other
// objects is refused; remote.json is 0600.
func TestCreateRemoteAttach(t *testing.T) {
	ctx := context.Background()
	s, b, cfg := newRemoteTest(t, 0)
	if info, ok := InfoOf(s); !ok || info.Attached || info.Bucket != cfg.Bucket || info.CacheSize != DefaultChunkCacheSize {
		t.Fatalf("first store: %+v, %v", info, ok)
	}
	fi, err := os.Stat(filepath.Join(s.Root(), store.RemoteConfigName))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("remote.json: %v, %v", fi.Mode(), err)
	}
	d, blob := testBlob(t, 5, 3000)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	s2, err := Create(ctx, filepath.Join(t.TempDir(), "second"), cfg, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if info, _ := InfoOf(s2); !info.Attached {
		t.Fatalf("second directory: %+v, want attached", info)
	}
	if has, err := s2.HasChunk(context.Background(), d); err != nil || !has {
		t.Fatal("the attached store does not see the first one's chunk")
	}
	if _, err := Create(ctx, s.Root(), cfg, store.CreateOptions{}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("create over a remote store's directory: %v", err)
	}
	// a prefix with other objects
	other := cfg
	other.Prefix = "elsewhere"
	if _, err := b.Put(ctx, "elsewhere/photo.jpg", objstore.Cond{}, []byte("jpeg")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "third")
	if _, err := Create(ctx, dir, other, store.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "photo.jpg") {
		t.Fatalf("create among other objects: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s written: %v", dir, err)
	}
	// a hostile marker
	if _, err := b.Put(ctx, "bad/"+storeMarkerKey, objstore.Cond{}, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	bad := cfg
	bad.Prefix = "bad"
	if _, err := Create(ctx, filepath.Join(t.TempDir(), "fourth"), bad, store.CreateOptions{}); err == nil || !strings.Contains(err.Error(), "marker") {
		t.Fatalf("create on a hostile marker: %v", err)
	}
}
