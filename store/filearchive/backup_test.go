package filearchive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestRoundTrip backs a tree with every entry kind up through a real
// store in each mode and compares the archive entry by entry with the
// source; the metadata-mode backup of the unchanged tree reads nothing.
func TestRoundTrip(t *testing.T) {
	src := t.TempDir()
	acls := storetest.RichTree(t, src)
	s := newStore(t)
	for _, mode := range []Mode{ModeLegacy, ModeData, ModeMetadata} {
		t.Run(mode.String(), func(t *testing.T) {
			var reported []string
			opt := Options{Mode: mode, ChunkSize: 64 << 10, OnError: func(p string, err error) { reported = append(reported, p) }}
			res, snap := backupTree(t, s, src, opt)
			if len(reported) != 0 || res.Errors != 0 {
				t.Fatalf("errors reported: %q", reported)
			}
			if res.Mode != mode || res.Walk.Hardlinks != 2 || res.Walk.Symlinks != 3 {
				t.Errorf("result %+v", res)
			}
			if mode == ModeMetadata && (res.ReadFiles != 0 || res.ReusedFiles != int64(res.Walk.Files)) {
				t.Errorf("unchanged tree: %d files read, %d of %d reused", res.ReadFiles, res.ReusedFiles, res.Walk.Files)
			}
			m, err := s.ReadManifest(snap)
			must(t, err)
			ar, err := store.FindArchive(m, "root.pxar")
			must(t, err)
			wantKind := store.ArchiveSplitPxar
			if mode == ModeLegacy {
				wantKind = store.ArchiveSinglePxar
			}
			if ar.Kind != wantKind {
				t.Errorf("archive kind %v, want %v", ar.Kind, wantKind)
			}
			compareTree(t, openTree(t, s, snap), src, acls, nil)
		})
	}
}

// changeTree writes the incremental test's changes and returns the
// paths whose content the next backup must read.
func changeTree(t *testing.T, src string) []string {
	writeFile(t, src+"/d1/f03", randBytes(30000, 1003)) // same size, new content
	writeFile(t, src+"/d2/f05", randBytes(12345, 2005)) // new size
	writeFile(t, src+"/d2/new", randBytes(20000, 9))    // new file
	must(t, os.Remove(src+"/d1/f07"))                   // gone
	later := time.Now().Add(time.Hour)                  // touched: content read, found equal
	must(t, os.Chtimes(src+"/d3/f02", later, later))    //
	must(t, os.Chmod(src+"/d3/f04", 0o600))             // new ctime, same content
	return []string{"d1/f03", "d2/f05", "d2/new", "d3/f02", "d3/f04"}
}

func fileTree(t *testing.T, src string) {
	for d := 1; d <= 3; d++ {
		for f := 0; f < 10; f++ {
			writeFile(t, fmt.Sprintf("%s/d%d/f%02d", src, d, f), randBytes(30000, uint64(100*d+f)))
		}
	}
	must(t, os.Symlink("d1/f00", src+"/link"))
	must(t, os.Link(src+"/d1/f01", src+"/d3/hard"))
}

// TestIncremental changes a few files and checks that the next backup
// reads exactly those, stores the right content for all, and reuses the
// previous payload chunks for the others.
func TestIncremental(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 64 << 10, MaxPadding: -1}
	first, _ := backupTree(t, s, src, opt)
	if first.Mode != ModeData || first.ReadFiles != 30 {
		t.Fatalf("first backup %+v", first)
	}
	changed := changeTree(t, src)
	var mu sync.Mutex
	var read []string
	opt.onRead = func(p string) { mu.Lock(); read = append(read, p); mu.Unlock() }
	res, snap := backupTree(t, s, src, opt)
	slices.Sort(read)
	if res.Mode != ModeMetadata || !slices.Equal(read, changed) {
		t.Errorf("mode %v read %q, want %q", res.Mode, read, changed)
	}
	// d3/f02 and d3/f04 were read but their payload is the previous one.
	if res.ReusedFiles != 30-3 || res.InjectedBytes-res.PaddingBytes != res.ReusedBytes+16*res.ReusedFiles {
		t.Errorf("reused %d files of %d bytes, injected %d bytes with %d padding", res.ReusedFiles, res.ReusedBytes,
			res.InjectedBytes, res.PaddingBytes)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)

	// A third backup of the same tree reads nothing.
	read = nil
	res, snap = backupTree(t, s, src, opt)
	if len(read) != 0 || res.ReusedFiles != 30 {
		t.Errorf("third backup read %q, reused %d", read, res.ReusedFiles)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)

	// --change-detection-mode data reads everything.
	opt.Mode = ModeData
	read = nil
	res, _ = backupTree(t, s, src, opt)
	if len(read) != 30 || res.ReusedFiles != 0 {
		t.Errorf("data mode read %d files, reused %d", len(read), res.ReusedFiles)
	}
}

// TestRetiredChunks lets padding build up in a snapshot (no bound), then
// backs the unchanged tree up with a bound it exceeds: the least used
// chunks are retired, their files read again into dense chunks, the
// padding falls under the bound and the archive is still right.
func TestRetiredChunks(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 1 << 20, MaxPadding: -1} // chunks hold many files
	backupTree(t, s, src, opt)
	changeTree(t, src)
	loose, _ := backupTree(t, s, src, opt)
	if loose.PaddingBytes == 0 || loose.RetiredChunks != 0 {
		t.Fatalf("no bound: padding %d, %d chunks retired", loose.PaddingBytes, loose.RetiredChunks)
	}
	var read []string
	opt.onRead = func(p string) { read = append(read, p) }
	opt.MaxPadding = 0.01
	res, snap := backupTree(t, s, src, opt)
	live := res.ReusedBytes + pxar.HeaderSize*res.ReusedFiles
	if res.RetiredChunks == 0 || len(read) == 0 || int64(len(read)) != res.ReadFiles {
		t.Errorf("retired %d chunks, read %d files (%d counted)", res.RetiredChunks, len(read), res.ReadFiles)
	}
	if float64(res.PaddingBytes) > 0.01*float64(live) {
		t.Errorf("padding %d of %d live bytes after retiring (was %d)", res.PaddingBytes, live, loose.PaddingBytes)
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)
}

// TestVanish removes files while the walk runs: one before it is
// reached, one between its reference and its re-read. Both are reported
// with their path, the backup finishes and counts them.
func TestVanish(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	opt := Options{ChunkSize: 64 << 10}
	_, first := backupTree(t, s, src, opt)
	later := time.Now().Add(time.Hour)
	must(t, os.Chtimes(src+"/d2/f00", later, later)) // read (its digest checked) in the next backup
	got := map[string]error{}
	opt.OnError = func(p string, err error) { got[p] = err }
	// the previous payload's chunks are gone: runs of unchanged files
	// are read again at their end (which heals the store)
	removeChunks(t, s, first, "root.ppxar.didx")
	opt.onRead = func(p string) {
		if _, err := os.Stat(src + "/d2/f05"); p == "d2/f00" && err == nil {
			must(t, os.Remove(src+"/d2/f05")) // listed, not reached yet
			must(t, os.Remove(src+"/d1/f09")) // referenced, read again later
		}
	}
	res, snap := backupTree(t, s, src, opt)
	if len(got) != 2 || !errors.Is(got["d2/f05"], fs.ErrNotExist) || !errors.Is(got["d1/f09"], fs.ErrNotExist) || res.Errors != 2 {
		t.Fatalf("reported %v, errors %d", got, res.Errors)
	}
	a := openTree(t, s, snap)
	if _, err := a.LookupPath(context.Background(), "d2/f05"); !errors.Is(err, pxar.ErrNotFound) {
		t.Errorf("vanished file in the archive: %v", err)
	}
	e, err := a.LookupPath(context.Background(), "d1/f09")
	must(t, err)
	if c := content(t, a, e); len(c) != 30000 || c[0] != 0 || c[29999] != 0 {
		t.Errorf("vanished referenced file: %d bytes, not zero-filled", len(c))
	}
	for d := 1; d <= 3; d++ { // directory mtimes moved: compare the files only
		for f := 0; f < 10; f++ {
			rel := fmt.Sprintf("d%d/f%02d", d, f)
			want, err := os.ReadFile(src + "/" + rel)
			if err != nil {
				continue
			}
			e, err := a.LookupPath(context.Background(), rel)
			must(t, err)
			if !bytes.Equal(content(t, a, e), want) {
				t.Errorf("%s: content differs", rel)
			}
		}
	}
}

func TestExcludes(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src+"/keep", []byte("k"))
	writeFile(t, src+"/top.o", []byte("x"))
	writeFile(t, src+"/sub/x.o", []byte("x"))
	writeFile(t, src+"/sub/cache/c", []byte("x"))
	writeFile(t, src+"/sub/.pxarexclude", []byte("cache/\n/only-here\n"))
	writeFile(t, src+"/sub/only-here", []byte("x"))
	writeFile(t, src+"/other/only-here", []byte("kept"))
	excluded := map[string]bool{"top.o": true, "sub/x.o": true, "sub/cache": true, "sub/only-here": true}
	s := newStore(t)
	res, snap := backupTree(t, s, src, Options{Exclude: []string{"*.o"}})
	if res.Walk.Excluded != uint64(len(excluded)) {
		t.Errorf("%d excluded, want %d", res.Walk.Excluded, len(excluded))
	}
	a := openTree(t, s, snap)
	if string(a.Prelude()) != `{"exclude-patterns":"*.o\n"}` {
		t.Errorf("prelude %q", a.Prelude())
	}
	compareTree(t, a, src, nil, func(rel string) bool { return excluded[rel] })
}

// removeChunks deletes the chunks of a snapshot's index from the store,
// but its first (which the stream's start marker makes every reader
// open).
func removeChunks(t *testing.T, s *store.Store, snap store.Snapshot, file string) {
	x, err := s.OpenIndexFile(snap, file)
	must(t, err)
	defer x.Close()
	if x.Len() < 3 {
		t.Fatalf("%s has %d chunks: too few to remove some", file, x.Len())
	}
	for i := 1; i < x.Len(); i++ {
		d, _, _ := x.Chunk(i)
		if err := os.Remove(s.ChunkPath(d)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}
}
