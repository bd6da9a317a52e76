package fs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestForgetReadFiles reads every file of an archive the way tar does
// (list a directory, read its files in order: prefill and no-open reads
// at work), with readers in parallel as in the soak, then has the kernel
// forget its entries (drop_caches 2): the mount must count each entry
// once (parallel lookups of one name find one node of the table) and
// give back the nodes of the files read, as it does those only listed.
func TestForgetReadFiles(t *testing.T) {
	const dirs, per, readers = 8, 300, 4
	s, snap := manyFilesArchive(t, dirs, per)
	srv, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	root := filepath.Join(mnt, snap.String(), "root.pxar")
	readAll := func() error {
		ds, err := os.ReadDir(root)
		if err != nil || len(ds) != dirs {
			return fmt.Errorf("list root: %d entries (%v)", len(ds), err)
		}
		for _, d := range ds {
			fs, err := os.ReadDir(filepath.Join(root, d.Name()))
			if err != nil || len(fs) != per {
				return fmt.Errorf("list %s: %d entries (%v)", d.Name(), len(fs), err)
			}
			for _, f := range fs {
				if _, err := os.ReadFile(filepath.Join(root, d.Name(), f.Name())); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make([]error, readers)
	for i := range readers {
		wg.Go(func() { errs[i] = readAll() })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	// every entry, and the directories; fewer if caches were dropped meanwhile
	if n, want := srv.Stats().TreeEntries, int64(dirs*per+dirs); n > want {
		t.Errorf("%d readers: the mount counts %d entries held, want at most %d", readers, n, want)
	}
	t.Logf("read: %d entries held, %d prefilled", srv.Stats().TreeEntries, srv.Stats().Prefilled)
	if err := os.WriteFile("/proc/sys/vm/drop_caches", []byte("2"), 0); err != nil {
		t.Skipf("cannot drop the kernel's caches: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for srv.Stats().TreeEntries > 10 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if n := srv.Stats().TreeEntries; n > 10 {
		t.Errorf("after drop_caches the mount holds %d entries of the %d read", n, dirs*per)
	}
}
