package test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/test/e2e"
)

// gcStore makes a store (lazily created prefix directories) with two
// snapshots of many tiny chunks, the first forgotten: its own chunks
// are garbage, the second's must survive. Chunks are aged two days so
// every GC below has work in both phases.
func gcStore(t *testing.T, n int) (*store.Store, store.Snapshot) {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g := store.Group{Type: store.TypeHost, ID: "gc"}
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	old := tinyChunkSnapshot(t, s, g, at, 0, n)
	keep := tinyChunkSnapshot(t, s, g, at.Add(time.Hour), n/2, n) // shares half
	if err := s.ForgetSnapshot(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	ageChunkFiles(t, s)
	return s, keep
}

// tinyChunkSnapshot writes a finished snapshot whose dynamic index
// references chunks first..first+n-1 of 24 bytes each: a store of many
// chunks, quickly.
func tinyChunkSnapshot(t *testing.T, s *store.Store, g store.Group, at time.Time, first, n int) store.Snapshot {
	t.Helper()
	b, err := s.StartBackup(context.Background(), g, at)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	w, err := index.NewDynamicWriter(filepath.Join(b.Dir(), "data.didx"))
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 24)
	copy(data, "cairn gc e2e chunk")
	for i := first; i < first+n; i++ {
		binary.LittleEndian.PutUint32(data[20:], uint32(i))
		blob, err := chunk.EncodeBlob(nil, data, false)
		if err != nil {
			t.Fatal(err)
		}
		d := chunk.Sum(data)
		if _, err := s.InsertChunk(d, blob); err != nil {
			t.Fatal(err)
		}
		if err := w.Add(d, len(data)); err != nil {
			t.Fatal(err)
		}
	}
	csum, size, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddFile(store.FileInfo{Filename: "data.didx", Size: uint64(size), Csum: store.CsumHex(csum)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

func ageChunkFiles(t *testing.T, s *store.Store) {
	t.Helper()
	old := time.Now().Add(-48 * time.Hour)
	root := filepath.Join(s.Root(), ".chunks")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(p) == root {
			return err
		}
		return os.Chtimes(p, old, time.Time{})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// chunkFiles counts the files of the prefix directories by kind: chunks,
// and the hidden names a killed sweep leaves.
func chunkFiles(t *testing.T, s *store.Store) (chunks, aside int) {
	t.Helper()
	root := filepath.Join(s.Root(), ".chunks")
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(p) == root {
			return err
		}
		switch n := d.Name(); {
		case len(n) == 64:
			chunks++
		case strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".gc"):
			aside++
		}
		return nil
	})
	return chunks, aside
}

// killGC starts `cairn gc --atime-cutoff 0` and kills it (SIGKILL) as
// soon as its log (-v) shows the phase: reported is whether the process got
// to that phase before it was killed.
func killGC(t *testing.T, st, phaseLine string, delay time.Duration) (reached bool, after string) {
	t.Helper()
	cmd := exec.Command(e2e.Binary(), "--store", st, "-v", "gc", "--atime-cutoff", "0") // -v: the phases are INFO lines
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), phaseLine) {
			reached = true
			time.Sleep(delay)
			break
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	state, _ := cmd.Process.Wait()
	if state != nil && state.Success() {
		t.Fatalf("gc ended before it was killed in %q", phaseLine)
	}
	return reached, rest.String()
}

type gcReport struct {
	State         string `json:"state"`
	RemovedChunks int64  `json:"removed_chunks"`
	RemovedBad    int64  `json:"removed_bad"`
	StillBad      int64  `json:"still_bad"`
	RemovedTemp   int64  `json:"removed_temp"`
	MissingChunks int64  `json:"missing_chunks"`
	DiskChunks    int64  `json:"disk_chunks"`
	ChunkRefs     int64  `json:"chunk_refs"`
}

func runGC(t *testing.T, st string) gcReport {
	t.Helper()
	r := e2e.MustCairn(t, "--store", st, "gc", "--atime-cutoff", "0", "--json")
	var rep gcReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("gc --json: %v\n%s", err, r.Stdout)
	}
	return rep
}

// TestGCKilled kills GC (SIGKILL) in phase 1 and in phase 2: each time
// the store verifies, and the next GC finishes the work.
func TestGCKilled(t *testing.T) {
	const n = 20000
	t0 := time.Now()
	s, keep := gcStore(t, n)
	t.Logf("store of %d chunks made in %s", n*3/2, time.Since(t0))
	st := s.Root()
	total, _ := chunkFiles(t, s)

	start := time.Now()
	if reached, after := killGC(t, st, "access time check passed", 0); !reached || strings.Contains(after, "phase 1 done") {
		t.Fatalf("gc not killed in phase 1 (reached %v), logged afterwards:\n%s", reached, after)
	}
	t.Logf("killed in phase 1 after %s", time.Since(start))
	if c, _ := chunkFiles(t, s); c != total {
		t.Errorf("a GC killed in phase 1 removed %d chunks", total-c)
	}
	if _, err := os.Stat(filepath.Join(st, store.GCStatusName)); err == nil {
		t.Error("a killed GC saved a status")
	}
	t0 = time.Now()
	e2e.MustCairn(t, "--store", st, "verify", "--read-threads", "8", keep.String())
	t.Logf("verify in %s", time.Since(t0))

	ageChunkFiles(t, s) // what the killed phase 1 touched is unused again
	if reached, after := killGC(t, st, "phase 1 done", 300*time.Millisecond); !reached || strings.Contains(after, "phase 2 done") {
		t.Fatalf("gc not killed in phase 2 (reached %v), logged afterwards:\n%s", reached, after)
	}
	c, aside := chunkFiles(t, s)
	t.Logf("killed in phase 2: %d of %d chunk files left, %d set aside", c, total, aside)
	e2e.MustCairn(t, "--store", st, "verify", "--read-threads", "8", keep.String())

	rep := runGC(t, st)
	if rep.State != "ok" || rep.ChunkRefs != n || rep.MissingChunks != 0 {
		t.Errorf("gc after the kills: %+v", rep)
	}
	if c, aside := chunkFiles(t, s); c != n || aside != 0 {
		t.Errorf("after the second GC: %d chunk files and %d set aside, want %d and 0", c, aside, n)
	}
	e2e.MustCairn(t, "--store", st, "verify", "--read-threads", "8", keep.String())
	if out := e2e.MustCairn(t, "--store", st, "snapshots").Stdout; !strings.Contains(out, "last GC: ") || !strings.Contains(out, "deduplication factor") {
		t.Errorf("snapshots shows no GC line:\n%s", out)
	}
}

// TestGCBadAndTemporaryFiles: GC on a store with .bad copies, writers'
// temporary files and a killed sweep's set-aside files.
func TestGCBadAndTemporaryFiles(t *testing.T) {
	const n = 200
	s, keep := gcStore(t, n)
	st := s.Root()
	x, err := s.OpenIndexFile(keep, "data.didx")
	if err != nil {
		t.Fatal(err)
	}
	bad, _, _ := x.Chunk(7)
	other, _, _ := x.Chunk(8)
	x.Close()
	blob, err := os.ReadFile(s.ChunkPath(bad))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkBad(bad); err != nil {
		t.Fatal(err)
	}
	// a dead writer's temporary files, and a chunk a killed sweep set
	// aside that nothing references
	for i, name := range []string{bad.String() + ".tmp_a1b2c3", other.String() + ".tmp_zz"} {
		os.WriteFile(filepath.Join(filepath.Dir(s.ChunkPath(bad)), name), []byte{byte(i)}, 0o600)
	}
	garbage := chunk.Sum([]byte("nobody uses me"))
	os.MkdirAll(filepath.Dir(s.ChunkPath(garbage)), 0o700)
	os.WriteFile(filepath.Join(filepath.Dir(s.ChunkPath(garbage)), "."+garbage.String()+".gc"), []byte("x"), 0o600)
	ageChunkFiles(t, s)

	rep := runGC(t, st)
	if rep.StillBad != 1 || rep.MissingChunks != 1 || rep.RemovedTemp != 3 || rep.RemovedBad != 0 || rep.DiskChunks != n-1 {
		t.Errorf("first GC: %+v", rep)
	}
	if _, err := os.Stat(s.ChunkPath(bad) + ".0.bad"); err != nil {
		t.Errorf("the bad copy of a referenced chunk is gone: %v", err)
	}
	if r := e2e.Cairn(t, nil, "--store", st, "verify", keep.String()); r.Code == 0 {
		t.Error("verify passed with a chunk missing")
	}
	// a good copy is back (as a backup stores it): the bad copy goes
	if _, err := s.InsertChunk(bad, blob); err != nil {
		t.Fatal(err)
	}
	ageChunkFiles(t, s)
	rep = runGC(t, st)
	if rep.RemovedBad != 1 || rep.StillBad != 0 || rep.MissingChunks != 0 || rep.DiskChunks != n {
		t.Errorf("second GC: %+v", rep)
	}
	e2e.MustCairn(t, "--store", st, "verify", "--read-threads", "8", keep.String())
	if c, aside := chunkFiles(t, s); c != n || aside != 0 {
		t.Errorf("%d chunk files and %d set aside, want %d and 0", c, aside, n)
	}
	r := e2e.MustCairn(t, "--store", st, "gc", "--status")
	if !strings.Contains(r.Stdout, "removed   0 chunks, 1 bad") {
		t.Errorf("gc --status:\n%s", r.Stdout)
	}
}

// TestGCHostileCommandLine: bad values are refused by name, and a
// hostile .gc-status is reported, naming the file.
func TestGCHostileCommandLine(t *testing.T) {
	s, _ := gcStore(t, 10)
	st := s.Root()
	for _, v := range []string{"-1h", "soon", "99999999h", ""} {
		r := e2e.Cairn(t, nil, "--store", st, "gc", "--atime-cutoff", v)
		if r.Code != 2 || !strings.Contains(r.Stderr, "--atime-cutoff") {
			t.Errorf("--atime-cutoff %q: exit %d: %s", v, r.Code, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "gc", "--status"); r.Code != 0 || !strings.Contains(r.Stdout, "no GC") {
		t.Errorf("status of a store without GC: %d %s %s", r.Code, r.Stdout, r.Stderr)
	}
	os.WriteFile(filepath.Join(st, store.GCStatusName), []byte(`{"state": 7`), 0o600)
	r := e2e.Cairn(t, nil, "--store", st, "gc", "--status")
	if r.Code == 0 || !strings.Contains(r.Stderr, store.GCStatusName) {
		t.Errorf("hostile status: exit %d: %s", r.Code, r.Stderr)
	}
	if r := e2e.MustCairn(t, "--store", st, "snapshots"); !strings.Contains(r.Stdout, "last GC: ") {
		t.Errorf("snapshots with a hostile status:\n%s", r.Stdout)
	}
}

// TestGCFromMount starts GC through the mount's .jobs/gc/control, as the
// other kinds: a bad line is refused with EINVAL and shown in the
// status, a good one runs to ok and saves the report in the store.
func TestGCFromMount(t *testing.T) {
	s, keep := gcStore(t, 100)
	st := s.Root()
	mnt := e2e.MountStore(t, st)
	dir := filepath.Join(mnt, ".jobs", "gc")
	write := func(line string) error {
		f, err := os.OpenFile(filepath.Join(dir, "control"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			return err
		}
		_, err = f.Write([]byte(line + "\n"))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err := write("start atime-cutoff=yesterday"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad atime-cutoff: %v, want EINVAL", err)
	}
	if err := write("start atime-cutoff=0"); err != nil {
		t.Fatal(err)
	}
	var status struct {
		State  string   `json:"state"`
		Result gcReport `json:"result"`
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(dir, "status"))
		if err == nil && json.Unmarshal(b, &status) == nil && (status.State == "ok" || status.State == "failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("gc job did not end: %s %v", b, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status.State != "ok" || status.Result.RemovedChunks != 50 || status.Result.DiskChunks != 100 {
		t.Errorf("gc job: %+v", status)
	}
	if r := e2e.MustCairn(t, "--store", st, "gc", "--status"); !strings.Contains(r.Stdout, ": ok") {
		t.Errorf("gc --status after the job:\n%s", r.Stdout)
	}
	e2e.MustCairn(t, "--store", st, "verify", keep.String())
}
