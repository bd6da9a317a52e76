package filearchive

import (
	"testing"

	"github.com/cairnfs/cairn/store/storetest"
)

// TestRemoteIncremental: reuse on a store on object storage (MinIO):
// changed files split reused chunks, a touched file is compared with its
// previous content read from the bucket, retired chunks' files are read
// again; every snapshot reads back whole.
func TestRemoteIncremental(t *testing.T) {
	s := storetest.NewRemoteStore(t)
	src := t.TempDir()
	fileTree(t, src)
	opt := Options{ChunkSize: 64 << 10}
	backupTree(t, s, src, opt)
	changeTree(t, src)
	res, snap := backupTree(t, s, src, opt)
	if res.Mode != ModeMetadata || res.ReusedFiles < 25 {
		t.Fatalf("second backup: %+v", res)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)
	opt.MaxPadding = 1e-6
	res, snap = backupTree(t, s, src, opt)
	if res.RetiredChunks == 0 || res.ReadFiles == 0 {
		t.Errorf("third backup retired %d chunks, read %d files", res.RetiredChunks, res.ReadFiles)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)
}
