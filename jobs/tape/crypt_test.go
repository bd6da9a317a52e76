package tape

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
)

// cryptFixture is a store with a plain snapshot and encrypted ones: good,
// one whose chunk has a changed GCM tag (its CRC still passes) and one
// whose manifest signature was tampered with, exported to a drive.
type cryptFixture struct {
	s                     *store.Store
	key                   *crypt.Key
	plain, good, tag, sig string
	goodData              []byte
	encChunks             map[chunk.Digest]bool // encrypted chunks on tape (the zero chunk is shared)
	drive                 string
}

func newCryptFixture(t *testing.T) *cryptFixture {
	t.Helper()
	s := newStore(t)
	k := crypttest.NewKey(t)
	f := &cryptFixture{s: s, key: k, goodData: crypttest.Data("good"), encChunks: map[chunk.Digest]bool{}}
	enc := func(id string, data []byte) store.Snapshot {
		g := store.Group{Type: store.TypeVM, ID: id}
		snap := crypttest.Backup(t, s, g, t0, crypttest.Image{Data: data, Blobs: map[string][]byte{"qemu-server.conf.blob": []byte("memory: 512\n" + id)}}, k)
		for d := range crypttest.Chunks(t, s, snap, "disk.img.fidx") {
			f.encChunks[d] = true
		}
		return snap
	}
	f.plain = backup(t, s, "", "100", t0, randBytes("plain", 512<<10))
	good := enc("300", f.goodData)
	tag := enc("301", crypttest.Data("tag"))
	sig := enc("302", crypttest.Data("sig"))
	f.good, f.tag, f.sig = good.String(), tag.String(), sig.String()
	x, err := s.OpenIndexFile(tag, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	d, _, _ := x.Chunk(0)
	x.Close()
	crypttest.FlipTag(t, s, d)
	err = s.UpdateManifest(bg, sig, func(m *store.Manifest) error {
		other := hex.EncodeToString(make([]byte, 32))
		m.Signature = &other
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f.drive = t.TempDir()
	src := &StoreSource{S: s, StoreName: "store1"}
	dr, err := drive.Open(bg, f.drive)
	if err != nil {
		t.Fatal(err)
	}
	defer dr.Close() // restoreInto opens it again
	if _, err := Export(bg, dr, src, []string{f.plain, f.good, f.tag, f.sig}, exportOpts(2)); err != nil {
		t.Fatal(err)
	}
	return f
}

// restoreInto restores the fixture's media set into target, checking
// chunks with target's keys as the tape-restore job does.
func (f *cryptFixture) restoreInto(t *testing.T, target *store.Store) (*RestoreReport, map[string]SnapshotResult) {
	t.Helper()
	sink, err := NewStoreSink(bg, target)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := Restore(bg, openDrive(t, f.drive), sink, RestoreOptions{Pool: "pool", Logger: quiet,
		Reporter: &countingReporter{}, SnapshotKey: target.SnapshotKey})
	sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]SnapshotResult{}
	for _, r := range rr.Snapshots {
		states[r.Snapshot] = r
	}
	return rr, states
}

// Tape export carries encrypted chunks as they are: restored with the
// key, a snapshot is byte for byte the exported one, its signature holds,
// it reads back and verifies with the key; chunks whose tag fails and
// manifests whose signature fails are refused.
func TestTapeEncryptedWithKey(t *testing.T) {
	f := newCryptFixture(t)
	target := newStore(t)
	target.SetKeys(store.NewKeys(f.key))
	rr, states := f.restoreInto(t, target)
	if states[f.plain].State != StateDone || states[f.good].State != StateDone {
		t.Fatalf("states %+v", rr.Snapshots)
	}
	if r := states[f.tag]; r.State != StateFailed || !strings.Contains(r.Error, crypt.ErrAuth.Error()) {
		t.Errorf("changed tag: %+v", r)
	}
	if r := states[f.sig]; r.State != StateFailed || !strings.Contains(r.Error, "signature") {
		t.Errorf("tampered signature: %+v", r)
	}
	if r := states[f.good]; !strings.Contains(r.Encryption, "decrypted with key "+f.key.Fingerprint().Short()) {
		t.Errorf("encryption note %q", r.Encryption)
	}
	if rr.ChunksDecrypted == 0 || rr.ChunksWithoutKey != 0 {
		t.Errorf("%d chunks decrypted, %d without key", rr.ChunksDecrypted, rr.ChunksWithoutKey)
	}
	sameSnapshot(t, f.s, target, f.good)
	sameSnapshot(t, f.s, target, f.plain)
	snap, _ := ParseSnapshot(f.good)
	for d, kind := range crypttest.Chunks(t, f.s, snap, "disk.img.fidx") {
		a, _ := os.ReadFile(f.s.ChunkPath(d))
		b, err := os.ReadFile(target.ChunkPath(d))
		if !kind.Encrypted() || err != nil || !bytes.Equal(a, b) {
			t.Fatalf("chunk %s (%s) differs after the tape (%v)", d, kind, err)
		}
	}
	m, err := target.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	if key, err := target.SnapshotKey(snap, m); err != nil || key == nil {
		t.Fatalf("restored manifest: key %v, %v", key != nil, err)
	}
	if got, err := crypttest.ReadImage(t, target, snap, "disk.img.fidx"); err != nil || !bytes.Equal(got, f.goodData) {
		t.Fatalf("restored image: %v, equal %v", err, bytes.Equal(got, f.goodData))
	}
	checkVerifies(t, target, f.good, true)
}

// Without the key, encrypted chunks are restored after their CRC and
// structure checks (a changed tag passes them, as in PBS); a verify with
// the key afterwards finds it.
func TestTapeEncryptedWithoutKey(t *testing.T) {
	f := newCryptFixture(t)
	target := newStore(t)
	rr, states := f.restoreInto(t, target)
	for _, name := range []string{f.plain, f.good, f.tag, f.sig} {
		if states[name].State != StateDone {
			t.Fatalf("%s: %+v", name, states[name])
		}
	}
	if r := states[f.good]; !strings.Contains(r.Encryption, "not given") {
		t.Errorf("encryption note %q", r.Encryption)
	}
	if rr.ChunksWithoutKey != int64(len(f.encChunks)) || rr.ChunksDecrypted != 0 {
		t.Errorf("%d chunks without key (want %d), %d decrypted", rr.ChunksWithoutKey, len(f.encChunks), rr.ChunksDecrypted)
	}
	sameSnapshot(t, f.s, target, f.good)
	keyed := crypttest.KeyedView(t, target, f.key)
	checkVerifies(t, keyed, f.good, true)
	checkVerifies(t, keyed, f.tag, false)
}

// checkVerifies runs a verify job on one snapshot and wants it ok or
// failed.
func checkVerifies(t *testing.T, s *store.Store, name string, ok bool) {
	t.Helper()
	m := jobs.NewManager(context.Background(), s, nil)
	defer m.Close()
	if err := m.Register(verify.Kind{Sysfs: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	j, err := m.Start("verify", map[string]string{"snapshots": name})
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(context.Background(), j)
	if err != nil {
		t.Fatal(err)
	}
	rep := st.Result.(verify.Report)
	want := map[bool]jobs.State{true: jobs.StateOK, false: jobs.StateFailed}[ok]
	if st.State != want || (ok && rep.ChunksDecrypted == 0) {
		t.Fatalf("verify %s: %s, want %s: %+v", name, st.State, want, rep.Snapshots)
	}
}

// The tape-restore job checks encrypted chunks with the store's keys
// (--keyfile) and names keys only by fingerprint in its status.
func TestTapeRestoreJobEncrypted(t *testing.T) {
	f := newCryptFixture(t)
	target := newStore(t)
	target.SetKeys(store.NewKeys(f.key))
	m := newTestManager(t, target, RestoreKind{})
	st := runJob(t, m, "tape-restore", map[string]string{"drive": f.drive, "pool": "pool", "snapshots": f.good})
	rep, ok := st.Result.(RestoreJobReport)
	if st.State != jobs.StateOK || !ok || rep.RestoreReport == nil || rep.SnapshotsOK != 1 {
		t.Fatalf("job: %s %+v", st.State, st.Result)
	}
	if rep.ChunksDecrypted == 0 || rep.ChunksWithoutKey != 0 {
		t.Errorf("%d chunks decrypted, %d without key", rep.ChunksDecrypted, rep.ChunksWithoutKey)
	}
	js, _ := json.Marshal(st)
	raw := f.key.Export()
	defer clear(raw)
	if bytes.Contains(js, []byte(hex.EncodeToString(raw))) || !bytes.Contains(js, []byte(f.key.Fingerprint().Short())) {
		t.Errorf("status: key bytes in it, or no fingerprint: %s", js)
	}
}
