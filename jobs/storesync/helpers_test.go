package storesync

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/storetest"
)

var (
	t0  = time.Date(2025, 5, 1, 8, 0, 0, 0, time.UTC)
	vm1 = store.Group{Type: store.TypeVM, ID: "100"}
	ct2 = store.Group{NS: "prod", Type: store.TypeCT, ID: "200"}
)

const chunkSize = 64 << 10

// imageAt is the data of the n-th backup of a group: 16 chunks, chunk n
// changed from backup to backup, so backups share most chunks.
func imageAt(name string, n int) []byte {
	data := storetest.RandBytes(name, 16*chunkSize)
	for i := 1; i <= n; i++ {
		c := i % 16
		copy(data[c*chunkSize:], storetest.RandBytes(name+string(rune('a'+i)), chunkSize))
	}
	return data
}

// backups writes n finished snapshots of g, an hour apart from t0, each
// with a blob beside its image.
func backups(t *testing.T, s *store.Store, g store.Group, n int) []store.Snapshot {
	t.Helper()
	var out []store.Snapshot
	for i := range n {
		blob, err := chunk.EncodeBlob(nil, []byte("config "+g.String()), true)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, storetest.BackupImage(t, s, g, t0.Add(time.Duration(i)*time.Hour), storetest.Image{
			Data: imageAt(g.String(), i), ChunkSize: chunkSize, Blobs: map[string][]byte{"qemu.conf.blob": blob}}))
	}
	return out
}

// run syncs with opt and returns the report and the errors reported.
func run(t *testing.T, from, to *store.Store, opt Options) (Report, []string, error) {
	t.Helper()
	var obs recorder
	sy, err := New(from, to, opt, &obs)
	if err != nil {
		t.Fatal(err)
	}
	err = sy.Run(context.Background())
	return sy.Report(), obs.errs, err
}

// mustRun is run that fails the test on any error.
func mustRun(t *testing.T, from, to *store.Store, opt Options) Report {
	t.Helper()
	rep, errs, err := run(t, from, to, opt)
	if err != nil || len(errs) > 0 {
		t.Fatalf("sync: %v %q", err, errs)
	}
	return rep
}

type recorder struct {
	mu         sync.Mutex // groups are synced side by side
	errs, logs []string
}

func (r *recorder) Logf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(f, a...))
}

func (r *recorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(f, a...))
}

func (r *recorder) AddDone(int64, int64) {}

// finished lists a store's finished snapshots of g.
func finished(t *testing.T, s *store.Store, g store.Group) []store.Snapshot {
	t.Helper()
	infos, err := s.Snapshots(g)
	if err != nil && !strings.Contains(err.Error(), "not found") {
		t.Fatal(err)
	}
	var out []store.Snapshot
	for _, si := range infos {
		if !si.Finished {
			t.Fatalf("%s: unfinished snapshot left in %s", si.Snapshot, s.Root())
		}
		out = append(out, si.Snapshot)
	}
	return out
}

// sameSnapshot checks that the target holds snap as the source does:
// every file byte for byte, the manifest's fields but the verify state,
// and the image's data readable through the target's chunks.
func sameSnapshot(t *testing.T, from, to *store.Store, snap store.Snapshot) {
	t.Helper()
	ma, err := from.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	mb, err := to.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	delete(ma.Unprotected, "verify_state")
	ja, _ := json.Marshal(ma)
	jb, _ := json.Marshal(mb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("%s: manifests differ:\n%s\n%s", snap, ja, jb)
	}
	for _, fi := range ma.Files {
		a, _ := os.ReadFile(filepath.Join(from.SnapshotPath(snap), fi.Filename))
		b, err := os.ReadFile(filepath.Join(to.SnapshotPath(snap), fi.Filename))
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("%s: %s differs in the target (%v)", snap, fi.Filename, err)
		}
	}
	x, err := to.OpenSnapshotIndex(snap, mb, "disk.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	c, err := store.NewCache(to, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(io.NewSectionReader(chunkcache.NewReader(context.Background(), x, c, 0), 0, x.Size()))
	if err != nil {
		t.Fatal(err)
	}
	if want := imageAt(snap.Group.String(), int(snap.Time.Sub(t0)/time.Hour)); !bytes.Equal(got, want) {
		t.Fatalf("%s: the target's image reads back different", snap)
	}
}

// cancelBeforeManifest syncs from a to b and cancels the sync as the
// copy of at is about to get its manifest.
func cancelBeforeManifest(t *testing.T, a, b *store.Store, at store.Snapshot) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sy, err := New(a, b, Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sy.beforeFinish = func(s store.Snapshot) {
		if s == at {
			cancel()
		}
	}
	if err := sy.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled sync: %v", err)
	}
}
