package test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

// An object store that cannot be reached: a command fails at once with
// one line (no retries of an endpoint never reached), and a listing
// works from the local mirror with a warning that says how old it is.
func TestS3Unreachable(t *testing.T) {
	t.Parallel()
	srv := miniotest.StartOwn(t)
	dir, _ := initS3(t, srv, srv.Endpoint)
	image, _ := e2e.SparseImage(t, 1<<20, 3001)
	e2e.MustCairn(t, "--store", dir, "backup", "--type", "vm", "--id", "off", "--time", "2026-01-01T00:00:00Z", "disk.img:"+image)
	srv.Stop()
	defer srv.Restart() //nolint:errcheck // the server's own cleanup stops it

	ls := e2e.Cairn(t, nil, "--store", dir, "snapshots")
	if ls.Code != 0 || !strings.Contains(ls.Stdout, "vm/off/2026-01-01T00:00:00Z") ||
		!strings.Contains(ls.Stderr, "bucket unreachable: working from the local mirror of its snapshots, as of") {
		t.Fatalf("snapshots with the server down: exit %d\n%s%s", ls.Code, ls.Stdout, ls.Stderr)
	}
	bk := e2e.Cairn(t, nil, "--store", dir, "backup", "--type", "vm", "--id", "off", "disk.img:"+image)
	last := lastLine(bk.Stderr)
	if bk.Code != 1 || !strings.Contains(last, "unreachable (connection refused)") || strings.Contains(bk.Stderr, "retrying") || len(last) > 300 {
		t.Fatalf("backup with the server down: exit %d, want 1 with one short line and no retries:\n%s", bk.Code, bk.Stderr)
	}

	// a name that does not resolve: init fails at once, nothing made
	nodns := filepath.Join(t.TempDir(), "nodns")
	r := e2e.Cairn(t, nil, "--store", nodns, "init", "--s3", "s3://bucket/x", "--endpoint", "http://cairn-test.invalid:9000",
		"--path-style", "--credentials-file", storetest.CredentialsFile(t, srv))
	if r.Code != 1 || !strings.Contains(r.Stderr, "unreachable") || strings.Contains(r.Stderr, "retrying") {
		t.Fatalf("init at a name that does not resolve: exit %d:\n%s", r.Code, r.Stderr)
	}
}
