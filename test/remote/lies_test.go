package test

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// A lying object store (issue 28): a proxy in front of MinIO tells one
// lie at a time, and the real binary never reports a backup done over
// chunks the bucket does not hold. (store/remote_lies_test.go tells the
// same lies through the in-memory bucket.)
func TestS3Lies(t *testing.T) {
	t.Parallel() // no mount, its own bucket
	srv := miniotest.Start(t)
	proxy := miniotest.NewProxy(t, srv.Endpoint, 0)
	var dir, bucket string
	fresh := func() { dir, bucket = initS3(t, srv, proxy.Endpoint()) } // each subtest its own bucket
	image, _ := e2e.SparseImage(t, 1<<20, 28)
	backup := func(id, at string) e2e.Result {
		return e2e.Cairn(t, nil, "--store", dir, "backup", "--type", "vm", "--id", id, "--time", at,
			"--chunk-size", "64K", "--no-sync", "disk.img:"+image)
	}
	manifests := func(id string) int {
		n := 0
		for _, k := range s3Keys(t, srv, bucket, "cairn/vm/"+id+"/") {
			if strings.HasSuffix(k, "/"+store.ManifestName) {
				n++
			}
		}
		return n
	}

	t.Run("head says a missing chunk exists", func(t *testing.T) {
		fresh()
		proxy.SetLie(miniotest.LieHeadExists("/.chunks/"))
		r := backup("phantom", "2026-01-01T00:00:00Z")
		proxy.SetLie(nil)
		if r.Code != 0 {
			t.Fatalf("backup: exit %d: %s", r.Code, r.Stderr)
		}
		if v := e2e.Cairn(t, nil, "--store", dir, "verify", "vm/phantom"); v.Code != 0 {
			t.Fatalf("verify after a backup through lying HEADs: exit %d: %s%s", v.Code, v.Stdout, v.Stderr)
		}
	})

	t.Run("put answered without storing", func(t *testing.T) {
		fresh()
		proxy.SetLie(miniotest.LiePutNotStored("/.chunks/"))
		r := backup("dropped", "2026-01-01T00:00:00Z")
		proxy.SetLie(nil)
		if r.Code != 1 || !strings.Contains(r.Stderr, "ETag") {
			t.Fatalf("backup over PUTs that stored nothing: exit %d, want 1 naming the ETag: %s", r.Code, r.Stderr)
		}
		if n := manifests("dropped"); n != 0 {
			t.Fatalf("%d manifests published", n)
		}
	})

	t.Run("touch answered without copying", func(t *testing.T) {
		fresh()
		if r := backup("touched", "2026-01-01T00:00:00Z"); r.Code != 0 {
			t.Fatalf("first backup: exit %d: %s", r.Code, r.Stderr)
		}
		e2e.MustCairn(t, "--store", dir, "forget", "vm/touched/2026-01-01T00:00:00Z")
		time.Sleep(1100 * time.Millisecond) // LastModified has whole seconds
		start := time.Now().Add(-time.Second)
		proxy.SetLie(miniotest.LieCopyNotMade("/.chunks/"))
		r := backup("touched", "2026-01-02T00:00:00Z")
		proxy.SetLie(nil)
		if r.Code != 0 {
			t.Fatalf("second backup: exit %d: %s", r.Code, r.Stderr)
		}
		// every chunk it reused was stored again, not left with its old age
		for o := range srv.Client(t).ListObjectsIter(context.Background(), bucket, minio.ListObjectsOptions{Prefix: "cairn/.chunks/", Recursive: true}) {
			if o.Err != nil {
				t.Fatal(o.Err)
			}
			if o.LastModified.Before(start) {
				t.Errorf("chunk %s: LastModified %v, before the backup that reused it (%v)", o.Key, o.LastModified, start)
			}
		}
	})
}

// A listing that lags: the GC's host lists no writer lease while a
// backup on another host has written its chunks; the GC learns the
// writer from the registry and keeps them (the real MinIO, the lie in a
// proxy in front of it).
func TestS3LieListingLags(t *testing.T) {
	t.Parallel()
	srv := miniotest.Start(t)
	a, cfg := storetest.NewRemoteStoreOn(t, srv, s3store.Config{})
	proxy := miniotest.NewProxy(t, srv.Endpoint, 0)
	bcfg := cfg
	bcfg.Config = srv.ProxyConfig(proxy, cfg.Bucket)
	bcfg.CredentialsFile = cfg.CredentialsFile
	b := storetest.AttachRemoteStore(t, bcfg)
	ctx := context.Background()
	g := store.Group{Type: store.TypeVM, ID: "lag"}
	bk, err := a.StartBackup(ctx, g, time.Now().UTC().Truncate(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := bk.AddImage(ctx, "disk.img", bytes.NewReader(storetest.RandBytes("lag", 6*(64<<10))), store.ImageOptions{ChunkSize: 64 << 10, Workers: 1}); err != nil {
		bk.Abort()
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the chunks are older than the GC's start
	proxy.SetLie(miniotest.LieListOmits(".cairn/leases/writers/"))
	n := storetest.CollectUnmarked(t, b)
	proxy.SetLie(nil)
	if err := bk.Finish(); err != nil {
		t.Fatal(err)
	}
	if r := e2e.Cairn(t, nil, "--store", a.Root(), "verify"); r.Code != 0 {
		t.Fatalf("verify after a GC whose writer listing lagged (it removed %d chunks): exit %d: %s%s", n.RemovedChunks, r.Code, r.Stdout, r.Stderr)
	}
}

// The case through the binary: host A backs up from a pipe that
// pauses after 12 MiB; host B, whose listing of the writer leases comes
// back empty (a proxy in front of MinIO), runs `gc --atime-cutoff 0`;
// A's backup goes on, ends 0, and everything verifies.
func TestS3LieListingLagsBinary(t *testing.T) {
	t.Parallel()
	srv := miniotest.Start(t)
	proxy := miniotest.NewProxy(t, srv.Endpoint, 0)
	// A reaches the server through a proxy of its own that tells no lie:
	// its count of chunks stored tells when A has paused.
	proxyA := miniotest.NewProxy(t, srv.Endpoint, 0)
	bucket := srv.NewBucket(t)
	creds := storetest.CredentialsFile(t, srv)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, h := range []struct{ dir, endpoint string }{{a, proxyA.Endpoint()}, {b, proxy.Endpoint()}} {
		e2e.MustCairn(t, "--store", h.dir, "init", "--s3", "s3://"+bucket+"/cairn", "--endpoint", h.endpoint,
			"--path-style", "--credentials-file", creds)
	}
	pr, pw := io.Pipe()
	cmd := exec.Command(e2e.Binary(), "--store", a, "backup", "--type", "vm", "--id", "slow",
		"--chunk-size", "1M", "--no-sync", "disk.img:-")
	cmd.Stdin = pr
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stored := proxyA.PutsStored(chunkPuts, 11)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait(); close(done) }()
	data := e2e.RandBytes(16<<20, 2801)
	if _, err := pw.Write(data[:12<<20]); err != nil {
		t.Fatal(err)
	}
	await(t, stored, done, "11 chunks were stored")
	time.Sleep(1100 * time.Millisecond) // older than the GC's start: LastModified has whole seconds
	proxy.SetLie(miniotest.LieListOmits(".cairn/leases/writers/"))
	gc := e2e.Cairn(t, nil, "--store", b, "gc", "--atime-cutoff", "0")
	proxy.SetLie(nil)
	if _, err := pw.Write(data[12<<20:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-waited; err != nil {
		t.Fatalf("backup: %v: %s", err, stderr.String())
	}
	if gc.Code != 0 {
		t.Fatalf("gc: exit %d: %s", gc.Code, gc.Stderr)
	}
	if v := e2e.Cairn(t, nil, "--store", a, "verify"); v.Code != 0 {
		t.Fatalf("verify after a GC whose writer listing lagged (gc said: %s): exit %d: %s%s", gc.Stdout, v.Code, v.Stdout, v.Stderr)
	}
}
