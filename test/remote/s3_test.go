package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// s3Keys returns every key of bucket (prefix p), via a client of the
// server's own (behind cairn's back).
func s3Keys(t *testing.T, srv *miniotest.Server, bucket, p string) []string {
	t.Helper()
	var keys []string
	for o := range srv.Client(t).ListObjectsIter(context.Background(), bucket, minio.ListObjectsOptions{Prefix: p, Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", bucket, o.Err)
		}
		keys = append(keys, o.Key)
	}
	return keys
}

// initS3 creates a store in DIR on a fresh bucket of srv (keys from a
// 0600 credentials file) and returns DIR and the bucket.
func initS3(t *testing.T, srv *miniotest.Server, endpoint string) (dir, bucket string) {
	t.Helper()
	bucket = srv.NewBucket(t)
	dir = filepath.Join(t.TempDir(), "store")
	e2e.MustCairn(t, "--store", dir, "init", "--s3", "s3://"+bucket+"/cairn", "--endpoint", endpoint,
		"--path-style", "--credentials-file", storetest.CredentialsFile(t, srv), "--cache-size", "64M")
	return dir, bucket
}

// await waits for ev (of the proxy: requests it saw), failing the test
// if the backup ends first (done).
func await(t *testing.T, ev, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ev:
		return
	default:
	}
	select {
	case <-ev:
	case <-done:
		select {
		case <-ev:
		default:
			t.Fatalf("the backup ended before %s", what)
		}
	}
}

// chunkPuts is the part of the keys of chunk objects.
const chunkPuts = "cairn/.chunks/"

// startBackup starts `cairn [flags] backup` of image as vm/ID (64 KiB
// chunks: many requests) and returns its result channel.
func startBackup(t *testing.T, dir, id, image string, flags ...string) (<-chan e2e.Result, <-chan struct{}) {
	t.Helper()
	out := make(chan e2e.Result, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		out <- e2e.Cairn(t, nil, append(flags, "--store", dir, "backup", "--type", "vm", "--id", id, "--chunk-size", "64K",
			"--no-sync", "disk.img:"+image)...)
	}()
	return out, done
}

// The server stopped in the middle of a backup: back within the retry
// window, the backup succeeds; gone for good, the backup fails after its
// bounded retries with a clear error, leaves no complete-looking
// snapshot, and once the server is back the next backup of the same
// group succeeds and everything verifies. Then a chunk deleted behind
// cairn's back is found by verify. The retries are INFO lines (-v) of
// the command's own log handler: with --log-format json each is a JSON
// record, as every other line of stderr.
func TestS3ServerStoppedMidBackup(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	srv := miniotest.StartOwn(t)
	// Through a proxy that holds every request after the 16th chunk
	// stored until the server is stopped: the backups are cut in their
	// middle however fast or slow they run (and a server down behind the
	// proxy answers 503, as behind a load balancer).
	proxy := miniotest.NewProxy(t, srv.Endpoint, 0)
	dir, bucket := initS3(t, srv, proxy.Endpoint())
	image := func(seed uint64) string {
		p := filepath.Join(t.TempDir(), "disk.raw")
		if err := os.WriteFile(p, e2e.RandBytes(8<<20, seed), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// Back within the retry window.
	held := proxy.HoldAfterPuts(chunkPuts, 16)
	res, done := startBackup(t, dir, "a", image(1501), "-v", "--log-format", "json")
	await(t, held, done, "16 chunks were stored")
	srv.Stop()
	// Down until the backup has met the outage (a request answered 503),
	// however slow the machine: a fixed 1.5 s let a backup starved of CPU
	// under load make no request in it, and log no retry.
	met := proxy.Unreachable()
	proxy.Release()
	await(t, met, done, "it met the outage")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.Code != 0 {
		t.Fatalf("backup across a short outage: exit %d: %s", r.Code, r.Stderr)
	}
	retries := 0
	for _, rec := range jsonLines(t, r.Stderr) {
		if strings.Contains(fmt.Sprint(rec["msg"]), "retrying") && rec["level"] == "INFO" && rec["bucket"] == bucket {
			retries++
		}
	}
	if retries == 0 {
		t.Errorf("no retry logged (as an INFO JSON record naming the bucket) across the outage: %s", r.Stderr)
	}

	// Gone for good.
	imgB := image(1502)
	held = proxy.HoldAfterPuts(chunkPuts, 16)
	res, done = startBackup(t, dir, "b", imgB)
	await(t, held, done, "16 of its chunks were stored")
	srv.Stop()
	proxy.Release()
	start := time.Now()
	r = <-res
	t.Logf("backup with the server down failed after %v: %s", time.Since(start), lastLine(r.Stderr))
	if r.Code == 0 {
		t.Fatal("backup with the server down succeeded")
	}
	if strings.Contains(r.Stderr, "retrying") { // without -v: its error only
		t.Errorf("retries logged without -v: %s", r.Stderr)
	}
	// The cause: the proxy's 503 (with "connection refused" in its body,
	// which a HEAD's answer has not).
	if msg := lastLine(r.Stderr); !strings.Contains(msg, bucket) || !strings.Contains(msg, "attempts") ||
		!strings.Contains(msg, "connection refused") && !strings.Contains(msg, "503 Service Unavailable") ||
		strings.Contains(r.Stderr, srv.SecretKey) {
		t.Fatalf("error of the failed backup (want the bucket, the cause, no secret): %s", r.Stderr)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	for _, k := range s3Keys(t, srv, bucket, "cairn/vm/b/") {
		if strings.HasSuffix(k, "index.json.blob") {
			t.Fatalf("the failed backup left a manifest: %s", k)
		}
	}
	if out := e2e.MustCairn(t, "--store", dir, "snapshots").Stdout; strings.Contains(out, "vm/b/") {
		t.Fatalf("the failed backup is listed: %s", out)
	}
	e2e.MustCairn(t, "--store", dir, "backup", "--type", "vm", "--id", "b", "--chunk-size", "64K", "--no-sync", "disk.img:"+imgB)
	if out := e2e.MustCairn(t, "--store", dir, "snapshots").Stdout; strings.Count(out, "vm/b/") != 1 || strings.Count(out, "vm/a/") != 1 {
		t.Fatalf("snapshots after the next backup: %s", out)
	}
	e2e.MustCairn(t, "--store", dir, "verify")

	// A chunk deleted behind cairn's back (and from its local cache).
	chunks := s3Keys(t, srv, bucket, chunkPuts)
	victim := chunks[len(chunks)/2]
	if err := srv.Client(t).RemoveObject(context.Background(), bucket, victim, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, ".chunk-cache")); err != nil {
		t.Fatal(err)
	}
	r = e2e.Cairn(t, nil, "--store", dir, "verify")
	if r.Code == 0 {
		t.Fatalf("verify passed with chunk %s deleted: %s", victim, r.Stdout)
	}
	if digest := filepath.Base(victim); !strings.Contains(r.Stdout+r.Stderr, digest) {
		t.Fatalf("verify does not name the missing chunk %s: %s %s", digest, r.Stdout, r.Stderr)
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
