package test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/test/e2e"
)

// TestGCS3 runs gc with the binary on a store in a MinIO bucket: after a
// forget, `gc --atime-cutoff 0` deletes the forgotten snapshot's own
// chunks from the bucket and keeps the rest, which verify reads back
// whole from another directory attached to the bucket; a second gc from
// that directory finds nothing more to remove.
func TestGCS3(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	srv := miniotest.Start(t)
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	url := "s3://" + srv.NewBucket(t) + "/gc"
	s3 := []string{"--s3", url, "--endpoint", srv.Endpoint, "--path-style", "--region", "us-east-1"}
	tmp := t.TempDir()
	one, two := filepath.Join(tmp, "one"), filepath.Join(tmp, "two")
	run := func(args ...string) e2e.Result {
		t.Helper()
		r := e2e.Cairn(t, env, args...)
		if r.Code != 0 {
			t.Fatalf("cairn %s: exit %d\n%s%s", strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
		return r
	}
	run(append([]string{"--store", one, "init"}, s3...)...)
	run(append([]string{"--store", two, "init"}, s3...)...)
	first, _ := e2e.SparseImage(t, 4<<20, 1)
	second, _ := e2e.SparseImage(t, 4<<20, 2)
	run("--store", one, "backup", "--type", "vm", "--id", "1", "--time", "2025-01-01T00:00:00Z", "--chunk-size", "64K", "disk.img:"+first)
	run("--store", one, "backup", "--type", "vm", "--id", "1", "--time", "2025-01-02T00:00:00Z", "--chunk-size", "64K", "disk.img:"+second)
	run("--store", one, "forget", "vm/1/2025-01-01T00:00:00Z")
	time.Sleep(1100 * time.Millisecond) // LastModified has whole seconds
	rep := gcJSON(t, env, one)
	if rep.State != "ok" || rep.RemovedChunks == 0 || rep.MissingChunks != 0 || rep.DiskChunks == 0 {
		t.Fatalf("gc: %+v", rep)
	}
	run("--store", two, "verify")
	if again := gcJSON(t, env, two); again.State != "ok" || again.RemovedChunks != 0 || again.DiskChunks != rep.DiskChunks {
		t.Fatalf("second gc: %+v (first %+v)", again, rep)
	}
}

func gcJSON(t *testing.T, env []string, st string) gcReport {
	t.Helper()
	r := e2e.Cairn(t, env, "--store", st, "gc", "--atime-cutoff", "0", "--json")
	var rep gcReport
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &rep) != nil {
		t.Fatalf("gc --json: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	return rep
}
