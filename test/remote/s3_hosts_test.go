package test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// Two hosts (two store directories made by `cairn init --s3` on one
// bucket prefix) with the real binary: a backup on one shows on the
// other, which can read it, and so do notes set on one; a protection
// set on one keeps the other's forget out; a forget on one removes the
// snapshot from the bucket and from the other's listing.
func TestS3TwoHosts(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	srv := miniotest.Start(t)
	a, bucket := initS3(t, srv, srv.Endpoint)
	b := filepath.Join(t.TempDir(), "store")
	e2e.MustCairn(t, "--store", b, "init", "--s3", "s3://"+bucket+"/cairn", "--endpoint", srv.Endpoint,
		"--path-style", "--credentials-file", storetest.CredentialsFile(t, srv))
	img, data := e2e.SparseImage(t, 3<<20, 41)
	r := e2e.MustCairn(t, "--store", a, "backup", "--type", "vm", "--id", "7", "--chunk-size", "1M", "--json", "disk.img:"+img)
	var sum struct {
		Snapshot string `json:"snapshot"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &sum); err != nil || !strings.HasPrefix(sum.Snapshot, "vm/7/") {
		t.Fatalf("backup summary %q: %v", r.Stdout, err)
	}
	snap := sum.Snapshot
	list := e2e.MustCairn(t, "--store", b, "snapshots").Stdout
	if !strings.Contains(list, "vm/7/") {
		t.Fatalf("host b does not list host a's snapshot:\n%s", list)
	}
	if got := e2e.MustCairn(t, "--store", b, "cat", "vm/7", "disk.img").Stdout; got != string(data) {
		t.Fatal("host b reads other data than host a backed up")
	}
	e2e.MustCairn(t, "--store", a, "protect", snap)
	e2e.MustCairn(t, "--store", a, "notes", snap, "set on host a") // protected: notes still change, as in PBS
	if got := e2e.MustCairn(t, "--store", b, "notes", snap).Stdout; got != "set on host a\n" {
		t.Errorf("host b reads notes %q, want those host a set", got)
	}
	if r := e2e.Cairn(t, nil, "--store", b, "forget", snap); r.Code == 0 || !strings.Contains(r.Stderr, "protected") {
		t.Fatalf("forget of a snapshot another host protected: exit %d, %s", r.Code, r.Stderr)
	}
	e2e.MustCairn(t, "--store", a, "unprotect", snap)
	e2e.MustCairn(t, "--store", b, "forget", snap)
	if list := e2e.MustCairn(t, "--store", a, "snapshots").Stdout; strings.Contains(list, "vm/7/") {
		t.Fatalf("host a still lists the snapshot host b forgot:\n%s", list)
	}
	for _, k := range s3Keys(t, srv, bucket, "cairn/vm/") {
		if strings.HasPrefix(k, "cairn/vm/7/2") {
			t.Errorf("the bucket keeps %s of the forgotten snapshot", k)
		}
	}
	e2e.MustCairn(t, "--store", a, "verify")
}
