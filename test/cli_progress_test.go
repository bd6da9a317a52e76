package test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/test/e2e"
)

// progressEnv makes the plain progress lines come every few
// milliseconds (a test knob, documented in cmd/cairn/cli/progress.go).
var progressEnv = []string{"CAIRN_PROGRESS_INTERVAL=5ms"}

// TestCLIProgress covers issue 14's progress and summary items through
// the binary: init's progress and --json (one new store, used by the
// subtests that need an empty store), the plain and terminal displays,
// the backup summary and its chunk_upload_stats, snapshots' group lines,
// verify states, protection and notes, verify of unfinished snapshots,
// and tape export of a group with the restored copy not verified.
func TestCLIProgress(t *testing.T) {
	t.Parallel()
	st := contractStore(t) // the tape restores' target: jobs take the store's lock
	dst := filepath.Join(e2e.TmpfsDir(t, "cairn-e2e-progress-"), "new")

	// init: a progress line on stderr (not a terminal) counting the
	// 65,536 directories, and what was made as JSON.
	r := e2e.Cairn(t, progressEnv, "--store", dst, "init", "--json")
	var ini struct {
		Path, Kind string
		Dirs       int64
	}
	e2e.DecodeJSON(t, r, &ini)
	if r.Code != 0 || ini.Path != dst || ini.Kind != "local" || ini.Dirs != 65536 {
		t.Fatalf("init --json: exit %d %+v\n%s", r.Code, ini, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "init "+dst+": 65536 of 65536 directories") {
		t.Fatalf("init: no final progress line on stderr:\n%s", r.Stderr)
	}
	// The subtests run one after the other in the new store: a second
	// verify or tape export job on a store is refused while one runs.
	// Tape restores go to a second store of this test's own.
	t.Run("Plain", func(t *testing.T) { testProgressPlain(t, dst) })
	t.Run("Terminal", func(t *testing.T) { testProgressTerminal(t, dst) })
	t.Run("Summary", func(t *testing.T) { testBackupSummary(t, dst) })
	t.Run("Unfinished", func(t *testing.T) { testVerifyUnfinished(t, dst) })
	t.Run("TapeGroup", func(t *testing.T) { testTapeGroup(t, dst, st) })
}

// fifoBackupTo starts a backup of a FIFO (its size unknown) with stderr
// going to w; the caller writes the image into the returned writer.
func fifoBackupTo(t *testing.T, st, id string, stderr io.Writer, env ...string) (*exec.Cmd, *os.File) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "in.fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e2e.Binary(), "--store", st, "backup", "--type", "host", "--id", id, "--chunk-size", "256K",
		"--no-sync", "disk.img:"+fifo)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, w
}

// waitLine reads lines from r until one matches re; it returns it, or
// fails when r ends first.
func waitLine(t *testing.T, r *bufio.Reader, re *regexp.Regexp) string {
	t.Helper()
	var seen []string
	for {
		line, err := r.ReadString('\n')
		if re.MatchString(line) {
			return line
		}
		seen = append(seen, line)
		if err != nil {
			t.Fatalf("no line matching %s; got:\n%s", re, strings.Join(seen, ""))
		}
	}
}

// testProgressPlain: stderr to a pipe gives plain lines while the backup
// runs (a spinner's bytes and no total for a source of unknown size),
// one last line when it ends, and nothing at all under -q.
func testProgressPlain(t *testing.T, st string) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	cmd, in := fifoBackupTo(t, st, "progress-plain", pw, progressEnv...)
	pw.Close()
	data := e2e.RandBytes(1<<20, 71)
	if _, err := in.Write(data); err != nil {
		t.Fatal(err)
	}
	// The source is still open: the backup cannot have ended, and its
	// lines must show the bytes read so far, with no total.
	br := bufio.NewReader(pr)
	line := waitLine(t, br, regexp.MustCompile(`^backup host/progress-plain/\S+ disk\.img: [1-9][0-9.]* [KM]iB, .*elapsed`))
	if strings.Contains(line, " of ") || strings.Contains(line, "ETA") {
		t.Errorf("a source of unknown size shows a total or an ETA: %q", line)
	}
	in.Write(data)
	in.Close()
	rest, _ := io.ReadAll(br)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("backup: %v\n%s", err, rest)
	}
	if !strings.Contains(string(rest), "backup host/progress-plain/") || !strings.Contains(string(rest), ": 2.0 MiB, ") {
		t.Errorf("no last line with the 2 MiB read:\n%s", rest)
	}

	// A known size: the last line has the total and 100%.
	img := filepath.Join(t.TempDir(), "d.img")
	os.WriteFile(img, data, 0o644)
	r := e2e.Cairn(t, progressEnv, "--store", st, "backup", "--type", "host", "--id", "progress-plain", "--no-sync", "d.img:"+img)
	if r.Code != 0 || !strings.Contains(r.Stderr, ": 1.0 MiB of 1.0 MiB (100.0%)") {
		t.Fatalf("backup of a file: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// -q: no progress, no summary.
	r = e2e.Cairn(t, progressEnv, "--store", st, "-q", "backup", "--type", "host", "--id", "progress-plain", "--no-sync", "d.img:"+img)
	if r.Code != 0 || r.Stderr != "" || r.Stdout != "" {
		t.Fatalf("backup -q: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	// The jobs' displays are the same one: verify prints its chunks.
	r = e2e.Cairn(t, progressEnv, "--store", st, "verify", "host/progress-plain")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^verify: .* of \d+ chunks, .*elapsed`).MatchString(r.Stderr) {
		t.Fatalf("verify: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	// prune and gc, which had no progress, count their groups and items.
	r = e2e.Cairn(t, progressEnv, "--store", st, "prune", "host/progress-plain", "--keep-last", "2")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^prune: 1 of 1 groups, .*elapsed`).MatchString(r.Stderr) {
		t.Fatalf("prune: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	r = e2e.Cairn(t, progressEnv, "--store", st, "gc")
	if r.Code != 0 || !regexp.MustCompile(`(?m)^gc: (\d+) of \d+ items, .*elapsed`).MatchString(r.Stderr) {
		t.Fatalf("gc: exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
}

// testProgressTerminal: stderr on a terminal (a pseudo-terminal here)
// redraws one line in place: a spinner and the bytes for a source of
// unknown size, no newline; the line is cleared at the end.
func testProgressTerminal(t *testing.T, st string) {
	master, slave := openPTY(t)
	defer master.Close()
	cmd, in := fifoBackupTo(t, st, "progress-tty", slave, progressEnv...)
	slave.Close()
	data := e2e.RandBytes(1<<20, 72)
	if _, err := in.Write(data); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\r\x1b\[K[-\\|/] backup host/progress-tty/\S+ disk\.img: [1-9][0-9.]* [KM]iB`)
	var got []byte
	buf := make([]byte, 4096)
	for !re.Match(got) {
		n, err := master.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("no spinner line on the terminal: %v\n%q", err, got)
		}
	}
	if strings.Contains(string(got), "\n") {
		t.Errorf("the terminal display printed a newline: %q", got)
	}
	in.Close()
	go io.Copy(io.Discard, master)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// openPTY opens a pseudo-terminal pair.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}

// testVerifyUnfinished: a selection of unfinished snapshots only is
// "nothing to verify", exit 0; a missing snapshot still fails.
func testVerifyUnfinished(t *testing.T, st string) {
	ns, _ := e2e.UniqueNS("unfinished")
	dir := filepath.Join(st, "ns", ns, "vm", "7", "2024-06-01T00:00:00Z")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--ns", ns}, {"--ns", ns, "vm/7/2024-06-01T00:00:00Z"}, {"--ns", ns, "vm/7"}} {
		r := e2e.Cairn(t, nil, append([]string{"--store", st, "verify"}, args...)...)
		if r.Code != 0 || !strings.Contains(r.Stdout, ": nothing to verify\n") || !strings.Contains(r.Stdout, "1 unfinished") {
			t.Errorf("verify %v: exit %d\n%s%s", args, r.Code, r.Stdout, r.Stderr)
		}
	}
	r := e2e.Cairn(t, nil, "--store", st, "verify", "--ns", ns, "--json", "vm/7")
	var st1 struct {
		State  string `json:"state"`
		Result struct {
			Nothing    bool `json:"nothing_to_verify"`
			Unfinished int  `json:"snapshots_unfinished"`
		} `json:"result"`
	}
	e2e.DecodeJSON(t, r, &st1)
	if r.Code != 0 || st1.State != "ok" || !st1.Result.Nothing || st1.Result.Unfinished != 1 {
		t.Errorf("verify --json: exit %d %+v", r.Code, st1)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "verify", "--ns", ns, "vm/7/2024-06-02T00:00:00Z"); r.Code != 1 {
		t.Errorf("verify of a missing snapshot: exit %d, want 1\n%s", r.Code, r.Stderr)
	}
}

// testTapeGroup: tape export GROUP exports every snapshot of the group,
// --latest-only the newest; restored into another store they are not
// verified there, though verified in the source.
func testTapeGroup(t *testing.T, st, dst string) {
	ns, seed := e2e.UniqueNS("tapegroup")
	a, b := e2e.RandBytes(512<<10, seed), e2e.RandBytes(512<<10, seed+1)
	s1 := e2e.TapeBackup(t, st, ns, "1", "2024-07-01T10:00:00Z", a)
	s2 := e2e.TapeBackup(t, st, ns, "1", "2024-07-02T10:00:00Z", b)
	e2e.MustCairn(t, "--store", st, "verify", "--ns", ns)
	export := func(pool string, extra ...string) e2e.TapeExportResult {
		args := append([]string{"--store", st, "tape", "export", "--drive", filepath.Join(t.TempDir()), "--pool", pool,
			"--tape-size", "4M", "--json"}, extra...)
		var res e2e.TapeExportResult
		e2e.DecodeJSON(t, e2e.MustCairn(t, args...), &res)
		return res
	}
	names := func(res e2e.TapeExportResult) []string {
		var out []string
		for _, s := range res.Result.Snapshots {
			out = append(out, s.Snapshot)
		}
		return out
	}
	if res := export("latest", "--latest-only", "ns/"+ns+"/vm/1"); res.Result.OK != 1 || strings.Join(names(res), " ") != s2 {
		t.Errorf("export --latest-only GROUP: %v", names(res))
	}
	if res := export("one", "ns/"+ns+"/vm/1/latest"); res.Result.OK != 1 || strings.Join(names(res), " ") != s2 {
		t.Errorf("export GROUP/latest: %v", names(res))
	}
	if res := export("nslatest", "--latest-only", "--ns", ns); res.Result.OK != 1 || strings.Join(names(res), " ") != s2 {
		t.Errorf("export --latest-only --ns: %v", names(res))
	}
	drive := t.TempDir()
	r := e2e.Cairn(t, progressEnv, "--store", st, "tape", "export", "--drive", drive, "--pool", "all", "--tape-size", "4M", "--json",
		"--ns", ns, "vm/1")
	var res e2e.TapeExportResult
	e2e.DecodeJSON(t, r, &res)
	if r.Code != 0 || res.Result.OK != 2 || strings.Join(names(res), " ") != s1+" "+s2 {
		t.Fatalf("export GROUP: exit %d %+v", r.Code, res)
	}
	// the tape job's progress is the same display: bytes and chunks
	if !regexp.MustCompile(`(?m)^tape export: \S+ [KM]?i?B.*, \d+ (of \d+ )?chunks, .*elapsed`).MatchString(r.Stderr) {
		t.Errorf("tape export: no progress line:\n%s", r.Stderr)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "tape", "export", "--drive", drive, "--pool", "all", "vm/1/notatime"); r.Code != 2 {
		t.Errorf("export of a bad reference: exit %d, want 2\n%s", r.Code, r.Stderr)
	}

	e2e.MustCairn(t, "--store", dst, "tape", "restore", "--drive", drive, "--pool", "all", s1, s2)
	for _, c := range []struct{ store, want string }{{st, "verify ok"}, {dst, "not verified"}} {
		out := e2e.MustCairn(t, "--store", c.store, "snapshots", "--ns", ns).Stdout
		for _, snap := range []string{s1, s2} {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(snap) + ` .*\s` + c.want + `\s+-$`).MatchString(out) {
				t.Errorf("store %s: %s is not %q:\n%s", c.store, snap, c.want, out)
			}
		}
	}
}

// TestCLIInitS3JSON: init --s3 --json says what was made, and that a
// second directory was attached to the store in the bucket.
func TestCLIInitS3JSON(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	s3 := []string{"init", "--json", "--s3", "s3://" + bucket + "/p", "--endpoint", srv.Endpoint, "--path-style", "--region", "us-east-1"}
	tmp := t.TempDir()
	for i, attached := range []bool{false, true} {
		dir := filepath.Join(tmp, fmt.Sprint(i))
		r := e2e.Cairn(t, env, append([]string{"--store", dir}, s3...)...)
		var got struct {
			Path, Kind, URL, Endpoint string
			Dirs                      int64
			Attached                  bool
		}
		e2e.DecodeJSON(t, r, &got)
		if r.Code != 0 || got.Path != dir || got.Kind != "s3" || got.URL != "s3://"+bucket+"/p" || got.Endpoint == "" ||
			got.Dirs != 0 || got.Attached != attached {
			t.Errorf("init --s3 --json #%d: exit %d %+v\n%s", i, r.Code, got, r.Stderr)
		}
	}
}
