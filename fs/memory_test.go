package fs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
)

// maxEntryBytes bounds the heap a looked-up file archive entry costs the
// mount (about 93 bytes: a 72-byte slot of the node table and its index,
// rawtable.go). As a node of go-fuse's node API it cost about 525 bytes
// (go-fuse's inode, node tables and name maps about 370 of them);
// holding the decoded entry and its attributes over 1 KB.
const maxEntryBytes = 200

func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// manyFilesArchive stores a split archive of dirs directories of per
// one-line files each.
func manyFilesArchive(t *testing.T, dirs, per int) (*store.Store, store.Snapshot) {
	var meta, payload bytes.Buffer
	enc, err := pxar.NewEncoder(&meta, &payload, pxMeta(pxar.ModeIFDIR|0o755, 1600000000))
	if err != nil {
		t.Fatal(err)
	}
	for d := range dirs {
		if err := enc.CreateDirectory(fmt.Sprintf("d%03d", d), pxMeta(pxar.ModeIFDIR|0o755, 1600000000)); err != nil {
			t.Fatal(err)
		}
		for f := range per {
			data := fmt.Appendf(nil, "%d %d\n", d, f)
			if _, err := enc.AddFile(fmt.Sprintf("file%04d.go", f), pxMeta(pxar.ModeIFREG|0o644, 1600000001), uint64(len(data)), bytes.NewReader(data)); err != nil {
				t.Fatal(err)
			}
		}
		if err := enc.FinishDirectory(); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return splitArchiveStore(t, "many", meta.Bytes(), payload.Bytes())
}

// TestLookupMemory looks up 20,000 files of a file archive and counts the
// heap the mount keeps for them (at most maxEntryBytes each), then has
// the kernel forget them (drop_caches) and checks that the memory is
// given back. A first pass fills the chunk cache with the archive's
// metadata (about 1 MB here, 50 bytes an entry, which the cache bounds),
// and is forgotten before the pass that is measured. Entries the kernel
// drops while the test looks them up (another process dropping caches)
// make it measure again.
func TestLookupMemory(t *testing.T) {
	const dirs, per = 20, 1000
	s, snap := manyFilesArchive(t, dirs, per)
	srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	root := filepath.Join(mnt, snap.String(), "root.pxar")
	lookAll := func() {
		for d := range dirs {
			for f := range per {
				if _, err := os.Lstat(filepath.Join(root, fmt.Sprintf("d%03d/file%04d.go", d, f))); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	lookAll() // the archive's metadata in the chunk cache
	dropEntries(t, srv)
	if _, err := os.Lstat(root); err != nil { // the tree opened, its caches made
		t.Fatal(err)
	}
	var per0, h1 int64
	for try := 0; ; try++ {
		h0, n0 := liveHeap(), srv.Stats().TreeEntries
		lookAll()
		var n1 int64
		h1, n1 = liveHeap(), srv.Stats().TreeEntries
		if n1-n0 >= dirs*per {
			per0 = (h1 - h0) / (n1 - n0)
			break
		}
		if try == 3 {
			t.Skipf("the kernel keeps forgetting entries (%d of %d held): caches dropped by another process?", n1-n0, dirs*per)
		}
	}
	t.Logf("%d bytes per looked-up entry", per0)
	if per0 > maxEntryBytes {
		t.Errorf("a looked-up entry costs %d bytes of heap, want at most %d", per0, maxEntryBytes)
	}

	dropEntries(t, srv)
	n, h2 := srv.Stats().TreeEntries, liveHeap()
	if n > 10 || h1-h2 < int64(dirs*per)*per0*8/10 {
		t.Errorf("after drop_caches the kernel holds %d entries and the heap shrank by %d bytes, want at least %d", n, h1-h2, int64(dirs*per)*per0*8/10)
	}
}

// dropEntries has the kernel forget its entries (drop_caches) and waits
// up to 30 s until the mount holds at most 10 of them.
func dropEntries(t *testing.T, srv *Server) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Skipf("cannot drop the kernel's caches: %v", err)
	}
	for deadline := time.Now().Add(30 * time.Second); srv.Stats().TreeEntries > 10 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
}
