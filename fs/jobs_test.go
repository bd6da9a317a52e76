package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
)

// blockKind is a job kind that runs until it is cancelled.
type blockKind struct{}

func (blockKind) Name() string { return "block" }
func (blockKind) New(*store.Store, map[string]string) (jobs.Work, error) {
	return blockWork{}, nil
}

type blockWork struct{}

func (blockWork) Run(ctx context.Context, j *jobs.Job) error {
	j.Logf("blocking until cancelled")
	<-ctx.Done()
	return ctx.Err()
}

func readStatus(t *testing.T, path string) jobs.Status {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var st jobs.Status
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("%s: %v: %s", path, err, b)
	}
	return st
}

// waitState polls a status file until the job reaches a final state.
func waitState(t *testing.T, path string) jobs.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if st := readStatus(t, path); st.State.Done() {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: job did not end", path)
	return jobs.Status{}
}

func writeControl(path, cmd string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.Write([]byte(cmd + "\n"))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// TestJobsControl starts, refuses and cancels jobs through the control
// files of a real mount while a file of the same mount is read.
func TestJobsControl(t *testing.T) { forModes(t, testJobsControl) }

func testJobsControl(t *testing.T, one bool) {
	needFUSE(t)
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	img := randomData(77, 4<<20)
	f := &fixture{s: s, files: map[string][]byte{}, links: map[string]string{}, snaps: map[string]store.Snapshot{}}
	snap, err := f.backup(snapSpec{g: store.Group{Type: "vm", ID: "jobs"}, at: time.Unix(1700000000, 0), images: map[string][]byte{"disk.img": img}})
	if err != nil {
		t.Fatal(err)
	}
	mgr := jobs.NewManager(context.Background(), s, slog.New(slog.NewTextHandler(testWriter{t}, nil)))
	defer mgr.Close()
	for _, k := range []jobs.Kind{verify.Kind{}, blockKind{}} {
		if err := mgr.Register(k); err != nil {
			t.Fatal(err)
		}
	}
	_, mnt, _ := mountT(t, Options{Store: s, OneMount: one, Extra: []RootEntry{JobsEntry(mgr, uint32(os.Getuid()), uint32(os.Getgid()), 0)}})
	jd := filepath.Join(mnt, JobsDirName)
	names, err := os.ReadDir(jd)
	if err != nil || len(names) != 3 {
		t.Fatalf(".jobs holds %v (%v), want block, status, verify", names, err)
	}
	fi, err := os.Stat(filepath.Join(jd, "verify", "control"))
	if err != nil || fi.Mode().Perm() != 0o200 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
		t.Fatalf("control: %v %v", fi.Mode(), err)
	}
	if _, err := os.ReadFile(filepath.Join(jd, "verify", "control")); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("reading control: %v", err)
	}

	// a bad command fails the write with EINVAL, and status says why
	err = writeControl(filepath.Join(jd, "verify", "control"), "start bogus-param=1")
	if !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("bad command: %v", err)
	}
	if st := readStatus(t, filepath.Join(jd, "verify", "status")); !strings.Contains(st.LastCommandError, "bogus-param") {
		t.Fatalf("status does not say why: %+v", st)
	}
	if err := writeControl(filepath.Join(jd, "verify", "control"), "launch"); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("unknown word: %v", err)
	}

	// reads of the same mount go on while jobs run
	imgPath := filepath.Join(mnt, snap.String(), "disk.img")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			got, err := os.ReadFile(imgPath)
			if err != nil || !bytes.Equal(got, img) {
				readErr = errors.Join(err, errors.New("image read through the mount differs"))
				return
			}
		}
	}()

	if err := writeControl(filepath.Join(jd, "verify", "control"), "start chunk-order=index read-threads=2"); err != nil {
		t.Fatal(err)
	}
	st := waitState(t, filepath.Join(jd, "verify", "status"))
	if st.State != jobs.StateOK || st.Params["read-threads"] != "2" {
		t.Fatalf("verify: %+v", st)
	}
	m, _ := s.ReadManifest(snap)
	if vs, ok := m.VerifyState(); !ok || vs.State != "ok" || vs.UPID != st.ID {
		t.Fatalf("manifest verify state %+v", vs)
	}

	if err := writeControl(filepath.Join(jd, "block", "control"), "start"); err != nil {
		t.Fatal(err)
	}
	if err := writeControl(filepath.Join(jd, "block", "control"), "start"); !errors.Is(err, syscall.EBUSY) {
		t.Fatalf("second start of a running kind: %v", err)
	}
	if err := writeControl(filepath.Join(jd, "block", "control"), "cancel"); err != nil {
		t.Fatal(err)
	}
	if st := waitState(t, filepath.Join(jd, "block", "status")); st.State != jobs.StateCancelled {
		t.Fatalf("block after cancel: %+v", st)
	}
	log, _ := os.ReadFile(filepath.Join(jd, "block", "log"))
	if !strings.Contains(string(log), "blocking until cancelled") {
		t.Fatalf("log: %q", log)
	}
	all, _ := os.ReadFile(filepath.Join(jd, "status"))
	var list []jobs.Status
	if err := json.Unmarshal(all, &list); err != nil || len(list) != 2 {
		t.Fatalf(".jobs/status: %v %s", err, all)
	}
	close(stop)
	wg.Wait()
	if readErr != nil {
		t.Fatal(readErr)
	}
	// nothing else in the tree became writable
	if err := os.WriteFile(filepath.Join(jd, "verify", "status"), []byte("x"), 0); !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.EACCES) {
		t.Fatalf("writing status: %v", err)
	}
}
