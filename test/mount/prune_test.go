package test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// pruneResult is the part of `cairn prune --json` the tests read.
type pruneResult struct {
	State  string   `json:"state"`
	Errors []string `json:"errors"`
	Result struct {
		DryRun  bool `json:"dry_run"`
		Groups  int  `json:"groups"`
		Removed int  `json:"removed"`
		Skipped int  `json:"skipped"`
		Failed  int  `json:"failed"`
		Marks   struct {
			Keep        int `json:"keep"`
			KeepPartial int `json:"keep_partial"`
			Protected   int `json:"protected"`
			Remove      int `json:"remove"`
		} `json:"marks"`
		Snapshots []struct {
			Snapshot string `json:"snapshot"`
			Mark     string `json:"mark"`
			Removed  bool   `json:"removed"`
			Skipped  string `json:"skipped"`
		} `json:"snapshots"`
	} `json:"result"`
}

// marks returns "TIME mark[ removed|skipped: why]" for each snapshot of
// the result, in its order (oldest first).
func (r pruneResult) marks() []string {
	var out []string
	for _, s := range r.Result.Snapshots {
		line := s.Snapshot[strings.LastIndex(s.Snapshot, "/")+1:] + " " + s.Mark
		switch {
		case s.Removed:
			line += " removed"
		case s.Skipped != "":
			line += " skipped: " + s.Skipped
		}
		out = append(out, line)
	}
	return out
}

// storeTree describes every entry under root (path, mode, size, mtime,
// content hash), leaving out the prune job's lock file, which each run
// writes (who holds it), and the store root's mtime, which changes when
// that file is first made.
func storeTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if rel == ".job-prune.lck" || rel == "." {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", rel, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fifoBackup starts a backup of ns/NS/vm/ID at time at that reads its
// image from a FIFO; it blocks until the test writes. The returned
// function feeds data and closes the FIFO (data nil: kill the backup
// instead) and waits for the process.
func fifoBackup(t *testing.T, st, ns, id, at string) func(data []byte) error {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(e2e.Binary(), "--store", st, "backup", "--ns", ns, "--type", "vm", "--id", id, "--time", at,
		"--chunk-size", "256K", "--no-sync", "disk.img:"+fifo)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(e2e.RandBytes(300<<10, 77)) // the backup has started its snapshot
	done := false
	t.Cleanup(func() {
		if !done {
			cmd.Process.Kill()
			w.Close()
			cmd.Wait()
		}
	})
	return func(data []byte) error {
		done = true
		if data == nil {
			cmd.Process.Signal(syscall.SIGKILL)
			w.Close()
			cmd.Wait()
			return nil
		}
		w.Write(data)
		w.Close()
		return cmd.Wait()
	}
}

// waitDir waits until dir exists (a backup made its snapshot directory).
func waitDir(t *testing.T, dir string) {
	t.Helper()
	for range 1000 {
		if _, err := os.Stat(dir); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", dir)
}

// TestPrune prunes a group with finished, killed, running and protected
// snapshots through the binary: the dry run changes nothing in the
// store, the real run removes what the dry run said and nothing else,
// and what is left verifies.
func TestPrune(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("prune")
	base := e2e.RandBytes(1<<20, seed)
	var snaps []string
	for d := 1; d <= 5; d++ {
		data := append(slices.Clone(base[:768<<10]), e2e.RandBytes(256<<10, seed+uint64(d))...)
		snaps = append(snaps, e2e.TapeBackup(t, st, ns, "1", fmt.Sprintf("2024-03-0%dT10:00:00Z", d), data))
	}
	groupDir := filepath.Join(st, "ns", ns, "vm", "1")
	// A backup killed half way, then a finished one, then one running.
	fifoBackup(t, st, ns, "1", "2024-03-05T12:00:00Z")(nil)
	e2e.TapeBackup(t, st, ns, "1", "2024-03-06T10:00:00Z", base)
	running := fifoBackup(t, st, ns, "1", "2024-03-07T10:00:00Z")
	waitDir(t, filepath.Join(groupDir, "2024-03-07T10:00:00Z"))
	// PBS's protection marker.
	if err := os.WriteFile(filepath.Join(st, snaps[1], ".protected"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2024-03-01T10:00:00Z remove", "2024-03-02T10:00:00Z protected", "2024-03-03T10:00:00Z remove",
		"2024-03-04T10:00:00Z remove", "2024-03-05T10:00:00Z keep", "2024-03-05T12:00:00Z remove",
		"2024-03-06T10:00:00Z keep", "2024-03-07T10:00:00Z keep-partial",
	}
	group := "ns/" + ns + "/vm/1"

	before := storeTree(t, st)
	r := e2e.MustCairn(t, "--store", st, "prune", group, "--keep-last", "2", "--dry-run", "--json")
	var res pruneResult
	e2e.DecodeJSON(t, r, &res)
	if after := storeTree(t, st); after != before {
		t.Fatal("prune --dry-run changed the store")
	}
	if got := res.marks(); res.State != "ok" || !res.Result.DryRun || !slices.Equal(got, want) {
		t.Fatalf("dry run: %s %v\n got  %q\n want %q", res.State, res.Errors, got, want)
	}
	text := e2e.MustCairn(t, "--store", st, "prune", "--ns", ns, "vm/1", "--keep-last", "2", "--dry-run")
	if !strings.Contains(text.Stdout, "2024-03-05T12:00:00Z  remove        would be removed") ||
		!strings.Contains(text.Stdout, "2024-03-07T10:00:00Z  keep-partial") {
		t.Fatalf("dry run text:\n%s", text.Stdout)
	}

	r = e2e.MustCairn(t, "--store", st, "prune", group, "--keep-last", "2", "--json")
	e2e.DecodeJSON(t, r, &res)
	for i, w := range want {
		if strings.HasSuffix(w, " remove") {
			want[i] += " removed"
		}
	}
	if got := res.marks(); res.State != "ok" || res.Result.Removed != 4 || !slices.Equal(got, want) {
		t.Fatalf("prune: %s %v removed %d\n got  %q\n want %q", res.State, res.Errors, res.Result.Removed, got, want)
	}
	names, err := os.ReadDir(groupDir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range names {
		if !strings.HasPrefix(e.Name(), ".") {
			left = append(left, e.Name())
		}
	}
	if w := []string{"2024-03-02T10:00:00Z", "2024-03-05T10:00:00Z", "2024-03-06T10:00:00Z", "2024-03-07T10:00:00Z"}; !slices.Equal(left, w) {
		t.Fatalf("left %q, want %q", left, w)
	}
	// The running backup finishes, and everything left verifies.
	if err := running(e2e.RandBytes(1<<20, seed+9)); err != nil {
		t.Fatalf("the running backup failed: %v", err)
	}
	e2e.MustCairn(t, "--store", st, "verify", "--ns", ns)
	// No keep option: nothing is removed.
	r = e2e.MustCairn(t, "--store", st, "prune", "--all", "--ns", ns, "--json")
	e2e.DecodeJSON(t, r, &res)
	if res.Result.Removed != 0 || res.Result.Marks.Remove != 0 || res.Result.Marks.Keep != 3 || res.Result.Marks.Protected != 1 {
		t.Fatalf("prune without keep options: %+v", res.Result)
	}
}

// TestPruneBadInput: each mistake exits 2 naming what is wrong, and
// removes nothing.
func TestPruneBadInput(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("prunebad")
	e2e.TapeBackup(t, st, ns, "1", "2024-03-01T10:00:00Z", e2e.RandBytes(64<<10, seed))
	e2e.TapeBackup(t, st, ns, "1", "2024-03-02T10:00:00Z", e2e.RandBytes(64<<10, seed+1))
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--keep-last", "1"}, "give a group"},
		{[]string{"vm/1", "--all", "--keep-last", "1"}, "not both"},
		{[]string{"vm/1", "--keep-last", "-1"}, `keep-last="-1"`},
		{[]string{"vm/1", "--keep-daily", "10000000"}, `keep-daily="10000000"`},
		{[]string{"vm/1", "--keep-weekly", "many"}, "keep-weekly"},
		{[]string{"vm/1/2024-03-01T10:00:00Z", "--keep-last", "1"}, "without a snapshot time"},
		{[]string{"vm/../1", "--keep-last", "1"}, "vm/../1"},
		{[]string{"--all", "--ns", "a/../../b", "--keep-last", "1"}, "ns="},
		{[]string{"vm/1", "vm/2", "--keep-last", "1"}, "not 2 arguments"},
	}
	for _, c := range cases {
		args := append([]string{"--store", st, "prune", "--ns", ns}, c.args...)
		r := e2e.Cairn(t, nil, args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) {
			t.Errorf("prune %q: exit %d, stderr %q; want exit 2 naming %s", c.args, r.Code, r.Stderr, c.want)
		}
	}
	r := e2e.Cairn(t, nil, "--store", st, "prune", "--ns", ns, "vm/404", "--keep-last", "1")
	if r.Code != 1 || !strings.Contains(r.Stderr, "vm/404") {
		t.Errorf("missing group: exit %d, %q", r.Code, r.Stderr)
	}
	if n := len(e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns, "--json").Stdout); n == 0 ||
		strings.Count(e2e.MustCairn(t, "--store", st, "snapshots", "--ns", ns).Stdout, "vm/1/") != 2 {
		t.Error("a refused prune removed something")
	}
}

// TestPruneFromMount starts prune jobs through a mount's
// .jobs/prune/control, as a cron job would.
func TestPruneFromMount(t *testing.T) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("prunemnt")
	var snaps []string
	for d := 1; d <= 3; d++ {
		snaps = append(snaps, e2e.TapeBackup(t, st, ns, "7", fmt.Sprintf("2024-03-0%dT10:00:00Z", d), e2e.RandBytes(128<<10, seed+uint64(d))))
	}
	mnt := e2e.MountStore(t, st)
	control := filepath.Join(mnt, ".jobs", "prune", "control")
	write := func(line string) error { return os.WriteFile(control, []byte(line+"\n"), 0o200) }

	if err := write("start group=vm/7 ns=" + ns + " keep-daily=-1"); err == nil || !strings.Contains(err.Error(), "invalid argument") {
		t.Fatalf("bad keep-daily: %v", err)
	}
	var bad struct {
		LastCommandError string `json:"last_command_error"`
	}
	data, _ := os.ReadFile(filepath.Join(mnt, ".jobs", "prune", "status"))
	e2e.DecodeJSON(t, e2e.Result{Stdout: string(data)}, &bad)
	if !strings.Contains(bad.LastCommandError, `keep-daily="-1"`) {
		t.Errorf("status after a bad command: %s", data)
	}

	if err := write("start group=vm/7 ns=" + ns + " keep-daily=1 dry-run=1"); err != nil {
		t.Fatal(err)
	}
	var res pruneResult
	id := e2e.JobStatus(t, mnt, "prune", "", &res)
	if res.State != "ok" || !res.Result.DryRun || res.Result.Marks.Remove != 2 || res.Result.Removed != 0 {
		t.Fatalf("dry run from the mount: %+v", res)
	}
	if err := write("start group=ns/" + ns + "/vm/7 keep-daily=1"); err != nil {
		t.Fatal(err)
	}
	e2e.JobStatus(t, mnt, "prune", id, &res)
	if res.State != "ok" || res.Result.Removed != 2 {
		t.Fatalf("prune from the mount: %+v", res)
	}
	for i, s := range snaps {
		_, err := os.Stat(filepath.Join(st, s))
		if gone := err != nil; gone != (i < 2) {
			t.Errorf("%s: gone=%v after prune from the mount", s, gone)
		}
	}
	log, err := os.ReadFile(filepath.Join(mnt, ".jobs", "prune", "log"))
	if err != nil || !strings.Contains(string(log), "remove "+snaps[0]+": removed") {
		t.Errorf("log: %v\n%s", err, log)
	}
}
