package tape

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
)

// A tape export from a remote store: chunks read through the store from
// the bucket, in index order whatever was asked (no disk to order by),
// with no byte total (sizes would cost a request each); the tapes
// restore into a local store that verifies, file for file the same.
func TestTapeExportRemoteStore(t *testing.T) {
	s, cfg := storetest.NewRemoteStoreOn(t, miniotest.Start(t), s3store.Config{})
	a := randBytes("remote-tape-a", 8*testChunk)
	b := append(append([]byte(nil), a[:4*testChunk]...), randBytes("remote-tape-b", 6*testChunk)...)
	snapA := backup(t, s, "", "1", t0, a)
	snapB := backup(t, s, "", "1", t0.Add(time.Hour), b)
	dir := t.TempDir()
	// exported from another host: every chunk comes from the bucket
	m := newTestManager(t, storetest.AttachRemoteStore(t, cfg), ExportKind{Sysfs: t.TempDir()})
	st := runJob(t, m, "tape-export", map[string]string{"drive": dir, "pool": "p", "tape-size": "2M", "chunk-order": jobs.OrderInode})
	rep, ok := st.Result.(ExportJobReport)
	if st.State != jobs.StateOK || !ok || rep.ExportReport == nil {
		t.Fatalf("export: %+v", st)
	}
	if rep.SnapshotsOK != 2 || rep.Chunks != 14 || rep.ChunkOrder != jobs.OrderIndex || !strings.Contains(rep.ChunkOrderReason, "bucket") {
		t.Fatalf("export report: %+v", rep)
	}
	if p := st.Progress; p.ItemsDone != 14 || p.BytesDone != rep.Bytes || rep.Bytes == 0 {
		t.Fatalf("export progress: %+v (report bytes %d)", p, rep.Bytes)
	}
	dst, err := store.CreateWith(filepath.Join(t.TempDir(), "dst"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	st = runJob(t, newTestManager(t, dst, RestoreKind{}), "tape-restore", map[string]string{"drive": dir, "pool": "p"})
	if rrep := st.Result.(RestoreJobReport); st.State != jobs.StateOK || rrep.SnapshotsOK != 2 || rrep.Chunks != 14 {
		t.Fatalf("restore: %+v %+v", st, rrep)
	}
	for _, name := range []string{snapA, snapB} {
		sameSnapshot(t, s, dst, name)
	}
	vst := runJob(t, newTestManager(t, dst, verify.Kind{Sysfs: t.TempDir()}), "verify", nil)
	if vrep := vst.Result.(verify.Report); vst.State != jobs.StateOK || vrep.SnapshotsOK != 2 || vrep.Chunks != 14 {
		t.Fatalf("verify of the restored store: %+v", vrep)
	}
}
