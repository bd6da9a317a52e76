package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/test/e2e"
)

// The commands a cron job or a timer runs, with -q, print nothing when
// they succeed: no summary on stdout, no progress, no INFO or WARN line
// on stderr (issue 29: every run mailed). Commands on the store in a
// bucket run in the binary (e2e.inProcess), whose stderr is the
// process's own: a line of the S3 client's or of log/slog's default
// logger would show there.
func TestQuietCommands(t *testing.T) {
	t.Parallel() // its own stores and bucket
	srv := miniotest.Start(t)
	dir := e2e.TmpfsDir(t, "cairn-e2e-quiet-") // two stores: see e2e.SharedStore
	local, copied := filepath.Join(dir, "local"), filepath.Join(dir, "copy")
	for _, st := range []string{local, copied} {
		e2e.MustCairn(t, "--store", st, "init", "-q")
	}
	remote, _ := initS3(t, srv, srv.Endpoint)
	img := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(img, e2e.RandBytes(3<<20, 2901), 0o644); err != nil {
		t.Fatal(err)
	}
	tree := filepath.Join(dir, "tree")
	e2e.WriteTree(t, tree, map[string]string{"a": "alpha\n", "d/b": strings.Repeat("beta\n", 5000)})
	drive := filepath.Join(dir, "drive")
	if err := os.Mkdir(drive, 0o700); err != nil {
		t.Fatal(err)
	}

	quiet := func(t *testing.T, args ...string) {
		t.Helper()
		r := e2e.Cairn(t, nil, append([]string{"-q"}, args...)...)
		if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
			t.Errorf("cairn -q %s: exit %d, want 0 and no output\nstdout: %s\nstderr: %s",
				strings.Join(args, " "), r.Code, r.Stdout, r.Stderr)
		}
	}
	for _, b := range [][2]string{{"1", "2026-01-01T10:00:00Z"}, {"2", "2026-01-01T10:00:00Z"}, {"1", "2026-01-02T10:00:00Z"}} {
		quiet(t, "--store", local, "backup", "--type", "vm", "--id", b[0], "--time", b[1], "--no-sync",
			"disk.img:"+img, "tree.pxar:"+tree)
	}
	quiet(t, "--store", local, "verify")
	quiet(t, "--store", local, "tape", "export", "--drive", drive, "--pool", "all", "vm/1")
	quiet(t, "--store", copied, "tape", "restore", "--drive", drive, "--pool", "all") // vm/1
	quiet(t, "--store", copied, "sync", "--from", local)                              // vm/2
	quiet(t, "--store", remote, "sync", "--from", local)
	quiet(t, "--store", remote, "backup", "--type", "host", "--id", "h", "--no-sync", "tree.pxar:"+tree)
	quiet(t, "--store", remote, "verify")
	quiet(t, "--store", local, "restore", "vm/1/latest", "disk.img", filepath.Join(dir, "disk.out"))
	quiet(t, "--store", remote, "restore", "host/h/latest", "tree.pxar", filepath.Join(dir, "tree.out"))
	quiet(t, "--store", local, "prune", "vm/1", "--keep-last", "1")
	quiet(t, "--store", local, "forget", "--group", "vm/2")
	quiet(t, "--store", local, "gc")
	quiet(t, "--store", remote, "gc")
	if got, err := os.ReadFile(filepath.Join(dir, "disk.out")); err != nil || len(got) != 3<<20 {
		t.Fatalf("restore -q wrote %d bytes (%v)", len(got), err)
	}
	// They did their work: the copy has both groups (from tape, by sync),
	// the bucket the synced groups and the backup.
	if out := e2e.MustCairn(t, "--store", copied, "snapshots").Stdout; !strings.Contains(out, "vm/1/") || !strings.Contains(out, "vm/2/") {
		t.Errorf("the copy's snapshots after tape restore -q and sync -q: %s", out)
	}
	if out := e2e.MustCairn(t, "--store", remote, "snapshots").Stdout; !strings.Contains(out, "vm/2/") || !strings.Contains(out, "host/h/") {
		t.Errorf("the bucket's snapshots after sync -q and backup -q: %s", out)
	}
	// Without -q a plain gc shows its summary, and no INFO line (-v's).
	r := e2e.MustCairn(t, "--store", local, "gc")
	if !strings.Contains(r.Stdout, "on disk") || strings.Contains(r.Stderr, "level=INFO") {
		t.Errorf("gc: want its summary and no INFO line\nstdout: %s\nstderr: %s", r.Stdout, r.Stderr)
	}
	if r := e2e.MustCairn(t, "--store", local, "gc", "-v"); !strings.Contains(r.Stderr, "level=INFO") {
		t.Errorf("gc -v: no INFO line: %s", r.Stderr)
	}
}

// An error still reaches stderr under -q, with the exit status the
// command gives without it; stdout stays empty.
func TestQuietErrors(t *testing.T) {
	t.Parallel()
	srv := miniotest.StartOwn(t)               // stopped below
	dir := e2e.TmpfsDir(t, "cairn-e2e-quiet-") // a store: see e2e.SharedStore
	local := filepath.Join(dir, "local")
	e2e.MustCairn(t, "--store", local, "init", "-q")
	img := filepath.Join(dir, "disk.raw")
	if err := os.WriteFile(img, e2e.RandBytes(1<<20, 2902), 0o644); err != nil {
		t.Fatal(err)
	}
	e2e.MustCairn(t, "--store", local, "backup", "-q", "--type", "vm", "--id", "1", "--no-sync", "disk.img:"+img)
	remote, _ := initS3(t, srv, srv.Endpoint)

	// A corrupt chunk: verify finishes, exit 3.
	var chunks []string
	filepath.WalkDir(filepath.Join(local, ".chunks"), func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			chunks = append(chunks, p)
		}
		return nil
	})
	if len(chunks) == 0 {
		t.Fatal("no chunk in the store")
	}
	if err := os.WriteFile(chunks[0], []byte("not a chunk"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Stop() // the bucket's store fails to reach it
	for _, c := range []struct {
		code int
		want string
		args []string
	}{
		{3, "verify failed", []string{"--store", local, "verify"}},
		{1, "no store there", []string{"--store", filepath.Join(dir, "none"), "sync", "--from", local}},
		{1, "unreachable", []string{"--store", remote, "backup", "--type", "vm", "--id", "1", "--no-sync", "disk.img:" + img}},
		{1, "", []string{"--store", local, "restore", "vm/9/latest", "disk.img", filepath.Join(dir, "out")}},
	} {
		r := e2e.Cairn(t, nil, append([]string{"-q"}, c.args...)...)
		if r.Code != c.code || r.Stdout != "" || !strings.HasPrefix(r.Stderr, "cairn: ") || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("cairn -q %s: exit %d (want %d), stdout %q, stderr (want the error, %q): %s",
				strings.Join(c.args, " "), r.Code, c.code, r.Stdout, c.want, r.Stderr)
		}
		if strings.Contains(r.Stderr, "level=") {
			t.Errorf("cairn -q %s logged more than its error: %s", strings.Join(c.args, " "), r.Stderr)
		}
	}
}

// jsonLines checks that every line of stderr is a log/slog JSON record
// (--log-format json: one handler for every line, the S3 client's too)
// and returns the records.
func jsonLines(t *testing.T, stderr string) []map[string]any {
	t.Helper()
	var recs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["level"] == nil || m["msg"] == nil || m["time"] == nil {
			t.Errorf("a line of stderr is no slog JSON record (%v): %q", err, l)
			continue
		}
		recs = append(recs, m)
	}
	return recs
}
