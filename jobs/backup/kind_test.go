package backup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

func newManager(t *testing.T, s *store.Store) *jobs.Manager {
	m := jobs.NewManager(context.Background(), s, nil)
	t.Cleanup(m.Close)
	if err := m.Register(Kind{}); err != nil {
		t.Fatal(err)
	}
	return m
}

func wait(t *testing.T, m *jobs.Manager, j *jobs.Job) jobs.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := m.Wait(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// A backup job makes one snapshot of a directory tree, an image and a
// blob, reports the summary, and an incremental one references it.
func TestBackupJob(t *testing.T) {
	s := storetest.NewStore(t)
	m := newManager(t, s)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	storetest.RichTree(t, tree)
	img := filepath.Join(dir, "disk")
	if err := os.WriteFile(img, storetest.RandBytes("disk", 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "conf")
	if err := os.WriteFile(conf, []byte("memory: 512\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"ns": "prod", "group": "host/web1", "sources": "root.pxar:" + tree + ",disk.img:" + img + ",conf.blob:" + conf}
	var first Report
	for i := range 2 {
		j, err := m.Start(KindName, params)
		if err != nil {
			t.Fatal(err)
		}
		st := wait(t, m, j)
		rep, ok := st.Result.(Report)
		if st.State != jobs.StateOK || !ok {
			t.Fatalf("run %d: %+v", i, st)
		}
		if !strings.HasPrefix(rep.Snapshot, "ns/prod/host/web1/") || rep.Files == 0 || rep.Blobs != 1 || len(rep.Images) != 1 {
			t.Errorf("run %d: report %+v", i, rep)
		}
		if st.Progress.BytesDone != rep.Bytes || st.Progress.ItemsDone != rep.Chunks {
			t.Errorf("run %d: progress %+v, report %d bytes in %d chunks", i, st.Progress, rep.Bytes, rep.Chunks)
		}
		if i == 0 {
			first = rep
			continue
		}
		if rep.Images[0].Previous != first.Snapshot || rep.FileArchive[0].Previous != first.Snapshot || rep.NewChunks >= first.NewChunks {
			t.Errorf("incremental %+v: want %s as reference", rep, first.Snapshot)
		}
	}
}

// An entry that cannot be read is an error of the job, which ends
// failed; the snapshot is kept without it.
func TestBackupJobUnreadable(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads every file")
	}
	s := storetest.NewStore(t)
	m := newManager(t, s)
	tree := t.TempDir()
	secret := filepath.Join(tree, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0); err != nil {
		t.Fatal(err)
	}
	j, err := m.Start(KindName, map[string]string{"group": "host/a", "sources": "root.pxar:" + tree})
	if err != nil {
		t.Fatal(err)
	}
	st := wait(t, m, j)
	if st.State != jobs.StateFailed || st.ErrorCount != 1 || !strings.Contains(st.Errors[0], "secret") {
		t.Errorf("status %+v", st)
	}
	if _, err := s.Latest(store.Group{Type: "host", ID: "a"}); err != nil {
		t.Errorf("snapshot not kept: %v", err)
	}
}

// Bad parameters are refused before the job starts, naming the key.
func TestBackupParams(t *testing.T) {
	s := storetest.NewStore(t)
	m := newManager(t, s)
	dir := t.TempDir()
	for _, c := range []struct {
		params map[string]string
		want   string
	}{
		{map[string]string{"sources": "a.pxar:" + dir}, "group"},
		{map[string]string{"group": "vm", "sources": "a.pxar:" + dir}, "want TYPE/ID"},
		{map[string]string{"group": "pc/1", "sources": "a.pxar:" + dir}, "group"},
		{map[string]string{"group": "vm/1", "ns": "a//b", "sources": "a.pxar:" + dir}, "ns"},
		{map[string]string{"group": "vm/1"}, "sources"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar"}, "want NAME.img:PATH"},
		{map[string]string{"group": "vm/1", "sources": "a.tar:" + dir}, "want NAME.img:PATH"},
		{map[string]string{"group": "vm/1", "sources": "a.img:-"}, "standard input"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir + ",a.pxar:" + dir}, "given twice"},
		{map[string]string{"group": "vm/1", "sources": "index.json.blob:" + dir}, "reserved"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:/x,y"}, `archive "y"`},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "workers": "0"}, "workers"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "change-detection-mode": "fast"}, "change-detection-mode"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "keyfile": "/k"}, `no parameter "keyfile"`},
	} {
		_, err := m.Start(KindName, c.params)
		if !errors.Is(err, jobs.ErrBadParam) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a bad parameter naming %q", c.params, err, c.want)
		}
	}
	// a source missing when the job runs fails the job, naming it
	j, err := m.Start(KindName, map[string]string{"group": "vm/1", "sources": "a.img:" + filepath.Join(dir, "none")})
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, m, j); st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, ""), "a.img") {
		t.Errorf("missing source: %+v", st)
	}
}

// Params gives back what ParseParams reads.
func TestParamsRoundTrip(t *testing.T) {
	in := map[string]string{"ns": "a/b", "group": "ct/7", "sources": "x.pxar:/srv,y.img:/dev/sdb", "workers": "3", "all-file-systems": "true"}
	opt, err := ParseParams(in)
	if err != nil {
		t.Fatal(err)
	}
	out := opt.Params()
	for k, v := range in {
		if out[k] != v {
			t.Errorf("%s: %q, want %q", k, out[k], v)
		}
	}
}
