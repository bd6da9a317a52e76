package backup

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/crypt/keyfile"
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
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "keyfile": "k.json"}, "absolute"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "keyfile": "/k", "password-file": "pw"}, "absolute"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "password-file": "/pw"}, "without keyfile"},
		{map[string]string{"group": "vm/1", "sources": "a.pxar:" + dir, "master-pubkey": "/m"}, `no parameter "master-pubkey"`},
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
	in := map[string]string{"ns": "a/b", "group": "ct/7", "sources": "x.pxar:/srv,y.img:/dev/sdb", "workers": "3", "all-file-systems": "true",
		"keyfile": "/etc/cairn/key.json", "password-file": "/etc/cairn/pw"}
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

// writeKey writes a new key file at path, protected by pass (scrypt with
// a small cost) or in the clear when pass is empty, and returns its key.
func writeKey(t *testing.T, path, pass string) *crypt.Key {
	k, err := crypt.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	p := keyfile.Params{KDF: keyfile.None}
	if pass != "" {
		p = keyfile.Params{KDF: keyfile.Scrypt, N: 1024, R: 8, P: 1, Salt: storetest.RandBytes(path, 32)}
	}
	c, err := keyfile.NewWithParams(k, p, []byte(pass), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteNew(path); err != nil {
		t.Fatal(err)
	}
	return k
}

// A backup job with keyfile= makes an encrypted snapshot under that
// key, reading a protected key's passphrase from password-file=; a
// protected key without one, a wrong passphrase or a missing key file
// fail the run, naming the file, and make no snapshot.
func TestBackupJobEncrypted(t *testing.T) {
	s := storetest.NewStore(t)
	m := newManager(t, s)
	dir := t.TempDir()
	img := filepath.Join(dir, "disk")
	if err := os.WriteFile(img, storetest.RandBytes("disk", 300<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	clearKey, protKey := filepath.Join(dir, "clear.json"), filepath.Join(dir, "prot.json")
	kc, kp := writeKey(t, clearKey, ""), writeKey(t, protKey, "correct horse")
	pw, wrong := filepath.Join(dir, "pw"), filepath.Join(dir, "wrong")
	for f, text := range map[string]string{pw: "correct horse\n", wrong: "battery staple\n"} {
		if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(group string, key map[string]string) jobs.Status {
		params := map[string]string{"group": group, "sources": "disk.img:" + img}
		maps.Copy(params, key)
		j, err := m.Start(KindName, params)
		if err != nil {
			t.Fatal(err)
		}
		return wait(t, m, j)
	}
	for group, c := range map[string]struct {
		key  map[string]string
		want *crypt.Key
	}{
		"vm/1": {map[string]string{"keyfile": clearKey}, kc},
		"vm/2": {map[string]string{"keyfile": protKey, "password-file": pw}, kp},
	} {
		if st := run(group, c.key); st.State != jobs.StateOK {
			t.Fatalf("%s: %+v", group, st)
		}
		g := store.Group{Type: "vm", ID: strings.TrimPrefix(group, "vm/")}
		snap, err := s.Latest(g)
		if err != nil {
			t.Fatal(err)
		}
		man, err := s.ReadManifest(snap)
		if err != nil {
			t.Fatal(err)
		}
		if fp, ok, err := man.KeyFingerprint(); !ok || err != nil || fp != c.want.Fingerprint() || man.CryptMode() != "encrypt" {
			t.Errorf("%s: crypt mode %q, fingerprint %v %v %v; want the job's key", group, man.CryptMode(), fp, ok, err)
		}
	}
	for group, c := range map[string]struct {
		key  map[string]string
		want string
	}{
		"vm/3": {map[string]string{"keyfile": protKey}, "password-file="},
		"vm/4": {map[string]string{"keyfile": protKey, "password-file": wrong}, protKey},
		"vm/5": {map[string]string{"keyfile": filepath.Join(dir, "none.json")}, "none.json"},
		"vm/6": {map[string]string{"keyfile": clearKey, "password-file": filepath.Join(dir, "nopw")}, ""},
	} {
		st := run(group, c.key)
		if group == "vm/6" { // a key in the clear needs no passphrase: the file is not read
			if st.State != jobs.StateOK {
				t.Errorf("%s: %+v", group, st)
			}
			continue
		}
		if st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, ""), c.want) {
			t.Errorf("%s: %+v, want failed naming %q", group, st, c.want)
		}
		if _, err := s.Latest(store.Group{Type: "vm", ID: strings.TrimPrefix(group, "vm/")}); err == nil {
			t.Errorf("%s: a snapshot was made", group)
		}
	}
}
