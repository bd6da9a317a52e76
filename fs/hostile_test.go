package fs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/index"
)

// hostileFixture is a store of its own (hostile snapshots must not show
// in the shared fixture's mount) with good snapshots and one snapshot per
// class of hostile index, all sharing chunks.
type hostileFixture struct {
	s            *store.Store
	good, victim store.Snapshot
	want         []byte // what good and victim hold in both archives
	cases        map[string]store.Snapshot
	fifoManifest store.Snapshot      // its manifest is a FIFO
	fifoBlob     store.Snapshot      // its blob is a FIFO
	random       []hostile.IndexCase // random dynamic indexes, in cases too
	randomWant   map[string][]byte   // what the good ones of them hold
}

func newHostileFixture(t *testing.T) *hostileFixture {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	// 64 chunks: more than the kernel reads ahead of a first read.
	c, err := hostile.PutChunks(s, "fs hostile", 64, hostile.ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	f := &hostileFixture{s: s, cases: map[string]store.Snapshot{}}
	if f.good, f.want, err = hostile.WriteGood(ctx, s, store.Group{Type: store.TypeVM, ID: "good"}, t0, c); err != nil {
		t.Fatal(err)
	}
	if f.victim, _, err = hostile.WriteGood(ctx, s, store.Group{Type: store.TypeVM, ID: "victim"}, t0, c); err != nil {
		t.Fatal(err)
	}
	for _, ic := range hostile.IndexCases() {
		snap, err := hostile.WriteIndexCase(ctx, s, store.Group{Type: store.TypeVM, ID: ic.Name}, t0, ic, c)
		if err != nil {
			t.Fatal(err)
		}
		f.cases[ic.Name] = snap
	}
	f.fifoManifest, f.fifoBlob, err = hostile.WriteFIFOs(ctx, s, store.Group{Type: store.TypeCT, ID: "fifo-manifest"},
		store.Group{Type: store.TypeCT, ID: "fifo-blob"}, t0)
	if err != nil {
		t.Fatal(err)
	}
	f.randomWant = map[string][]byte{}
	for seed := range uint64(24) {
		ic := hostile.RandomDynamic(seed)
		snap, err := hostile.WriteIndexCase(ctx, s, store.Group{Type: store.TypeVM, ID: ic.Name}, t0, ic, c)
		if err != nil {
			t.Fatal(err)
		}
		f.cases[ic.Name] = snap
		f.random = append(f.random, ic)
		if ic.Stage == 0 {
			if f.randomWant[ic.Name], err = hostile.Content(filepath.Join(s.SnapshotPath(snap), ic.File), c); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f
}

// readFile reads a mounted file in 128 KiB requests from the start and
// then backwards from the end (so that every chunk is asked for with
// nothing cached ahead of it), and returns what it read and the first
// error. A read that returns less than asked before the end is an error.
func readFile(path string, size int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var got []byte
	buf := make([]byte, 128<<10)
	for off := int64(0); off < size; off += int64(len(buf)) {
		n, err := fh.ReadAt(buf, off)
		got = append(got, buf[:n]...)
		if err != nil && !(errors.Is(err, io.EOF) && off+int64(n) == size) {
			return got, err
		}
	}
	for off := size - 4096; off >= 0; off -= 3 * 4096 {
		if _, err := fh.ReadAt(buf[:4096], off); err != nil && !errors.Is(err, io.EOF) {
			return got, err
		}
	}
	return got, nil
}

func (f *hostileFixture) checkGood(t *testing.T, mnt string, snap store.Snapshot) {
	t.Helper()
	for _, name := range []string{"disk.img", "data"} {
		var got []byte
		var err error
		hostile.InTime(t, "read "+name, func() { got, err = readFile(filepath.Join(mnt, snap.String(), name), int64(len(f.want))) })
		if err != nil || !bytes.Equal(got, f.want) {
			t.Errorf("%s %s: %v, %d bytes of %d, equal %v", snap, name, err, len(got), len(f.want), bytes.Equal(got, f.want))
		}
	}
}

// TestMountHostileIndexes: every read of a hostile snapshot's file
// returns an error (EIO) within 5 s, the mount survives, and good
// snapshots that share the chunks read correctly before and after.
func TestMountHostileIndexes(t *testing.T) {
	f := newHostileFixture(t)
	forModes(t, func(t *testing.T, one bool) {
		_, mnt, logs := mountT(t, Options{Store: f.s, OneMount: one, CacheSize: 16 << 20})
		f.checkGood(t, mnt, f.good)
		for _, ic := range hostile.IndexCases() {
			path := filepath.Join(mnt, f.cases[ic.Name].String(), ic.Archive())
			var err error
			hostile.InTime(t, ic.Name, func() { _, err = readFile(path, 1<<30) })
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("%s: %v, want EIO", ic.Name, err)
			}
			// (A size past 2^63 is refused by the kernel at lookup,
			// before the mount sees an open or a read.)
			logged := bytes.Contains([]byte(logs.String()), []byte("snapshot="+f.cases[ic.Name].String()))
			if !logged && ic.Name != "fidx-size-negative" {
				t.Errorf("%s: the log does not name the snapshot", ic.Name)
			}
		}
		var err error
		hostile.InTime(t, "list a snapshot whose manifest is a FIFO", func() {
			_, err = os.ReadDir(filepath.Join(mnt, f.fifoManifest.String()))
		})
		if !errors.Is(err, syscall.EIO) && !errors.Is(err, syscall.ENOENT) {
			t.Errorf("snapshot with a FIFO manifest: %v, want EIO or ENOENT", err)
		}
		// The mount lists a blob it cannot read with size 0 (and logs
		// why); opening it fails.
		var got []byte
		hostile.InTime(t, "read a FIFO blob", func() { got, err = readFile(filepath.Join(mnt, f.fifoBlob.String(), hostile.BlobFile), 1) })
		if !errors.Is(err, syscall.EIO) && !(errors.Is(err, io.EOF) && len(got) == 0) {
			t.Errorf("FIFO blob: %v, %d bytes, want EIO or an empty file", err, len(got))
		}
		for _, ic := range f.random {
			var got []byte
			var err error
			path := filepath.Join(mnt, f.cases[ic.Name].String(), ic.Archive())
			want, good := f.randomWant[ic.Name]
			size := int64(len(want))
			if !good {
				size = 1 << 30
			}
			hostile.InTime(t, ic.Name, func() { got, err = readFile(path, size) })
			if good && (err != nil || !bytes.Equal(got, want)) {
				t.Errorf("%s (good): %v, %d bytes of %d", ic.Name, err, len(got), len(want))
			} else if !good && !errors.Is(err, syscall.EIO) {
				t.Errorf("%s: %v, want EIO", ic.Name, err)
			}
		}
		f.checkGood(t, mnt, f.good)
	})
}

// TestMountIndexTruncated cuts the index files of a snapshot whose files
// are open and partly read: later reads fail with EIO (no SIGBUS, which
// would end this process), and other snapshots read on.
func TestMountIndexTruncated(t *testing.T) {
	f := newHostileFixture(t)
	forModes(t, func(t *testing.T, one bool) {
		_, mnt, logs := mountT(t, Options{Store: f.s, OneMount: one, CacheSize: 16 << 20})
		for _, name := range []string{"disk.img", "data"} {
			fh, err := os.Open(filepath.Join(mnt, f.victim.String(), name))
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			buf := make([]byte, 4096)
			if _, err := fh.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, f.want[:4096]) {
				t.Fatalf("%s: first read: %v", name, err)
			}
			file := hostile.FixedFile
			if name == "data" {
				file = hostile.DynamicFile
			}
			path := filepath.Join(f.s.SnapshotPath(f.victim), file)
			orig, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			// Put it back for the other mode once this one is done: the
			// mapping of this mount stays failed, a new one reads it.
			t.Cleanup(func() { os.WriteFile(path, orig, 0o644) })
			hostile.InTime(t, "read after truncation", func() { _, err = fh.ReadAt(buf, int64(len(f.want))-2*hostile.ChunkSize) })
			if !errors.Is(err, syscall.EIO) {
				t.Errorf("%s: read after its index was cut: %v, want EIO", name, err)
			}
			if !bytes.Contains([]byte(logs.String()), []byte(index.ErrFault.Error())) {
				t.Errorf("%s: the log does not tell the index failed", name)
			}
		}
		f.checkGood(t, mnt, f.good)
	})
}
