package filearchive

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/pxar"
)

// streamBytes reads one index of snap whole.
func streamBytes(t *testing.T, s *store.Store, snap store.Snapshot, file string) []byte {
	x, err := index.OpenDynamic(filepath.Join(s.SnapshotPath(snap), file))
	must(t, err)
	defer x.Close()
	return readIndex(t, s, x)
}

// storeArchive makes a snapshot whose root.pxar holds the given streams.
func storeArchive(t *testing.T, s *store.Store, meta, payload []byte) store.Snapshot {
	ctx := context.Background()
	b, err := s.StartBackup(ctx, testGroup, nextTime())
	must(t, err)
	b.Sync = store.SyncNone
	for name, data := range map[string][]byte{"root.mpxar.didx": meta, "root.ppxar.didx": payload} {
		w, err := NewStreamWriter(ctx, s, filepath.Join(b.Dir(), name), StreamOptions{ChunkSize: testAvg})
		must(t, err)
		_, err = w.Write(data)
		must(t, err)
		fi, err := closeStream(w, name)
		must(t, err)
		must(t, b.AddFile(fi))
	}
	must(t, b.Finish())
	return b.Snapshot()
}

// openErr opens root.pxar of snap and looks path up: it returns the
// error of the open, or else of the lookup (and of opening the file or
// listing the directory found).
func openErr(t *testing.T, s *store.Store, snap store.Snapshot, path string) (openErr, lookupErr error) {
	ctx := context.Background()
	m, err := s.ReadManifest(snap)
	must(t, err)
	c, err := store.NewCache(s, 16<<20)
	must(t, err)
	defer c.Close()
	a, closeArchive, err := OpenName(ctx, s, snap, m, "root.pxar", c)
	if err != nil {
		return err, nil
	}
	defer closeArchive()
	e, err := a.LookupPath(ctx, path)
	switch {
	case err != nil:
	case e.Kind == pxar.KindFile:
		_, err = a.Open(ctx, e)
	case e.Kind == pxar.KindDir:
		var r *pxar.DirReader
		if r, err = a.ReadDir(e); err == nil {
			for err == nil {
				_, err = r.Next(ctx)
			}
			if errors.Is(err, io.EOF) {
				err = nil
			}
		}
	}
	return nil, err
}

// TestBadArchive damages a real archive's metadata in several ways: each
// gives an error that names the archive and the offset, never a panic.
func TestBadArchive(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src+"/dir/file", []byte("content"))
	writeFile(t, src+"/other", []byte("x"))
	s := newStore(t)
	_, snap := backupTree(t, s, src, Options{ChunkSize: testAvg})
	meta := streamBytes(t, s, snap, "root.mpxar.didx")
	payload := streamBytes(t, s, snap, "root.ppxar.didx")
	refAt := bytes.LastIndex(meta, binary.LittleEndian.AppendUint64(nil, pxar.TypePayloadRef))
	gb := bytes.Index(meta, binary.LittleEndian.AppendUint64(nil, pxar.TypeGoodbye))
	if refAt < 0 || gb < 0 {
		t.Fatal("no PAYLOAD_REF or GOODBYE item")
	}
	patch := func(at int, v uint64) []byte {
		b := bytes.Clone(meta)
		binary.LittleEndian.PutUint64(b[at:], v)
		return b
	}
	for _, c := range []struct {
		name, path string
		meta       []byte
		atOpen     bool // else at the lookup
	}{
		{"truncated", "", meta[:len(meta)-30], true},
		{"cut in half", "dir/file", meta[:len(meta)/2], true},
		{"payload ref outside", "other", patch(refAt+16, uint64(len(payload))), false},
		{"goodbye hash", "dir", patch(gb+16, 12345), false},
		{"goodbye offset", "dir/file", patch(gb+24, 1<<40), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			oerr, lerr := openErr(t, s, storeArchive(t, s, c.meta, payload), c.path)
			err := lerr
			if c.atOpen {
				err = oerr
				if !strings.Contains(fmt.Sprint(err), "archive root.pxar") {
					t.Errorf("error %v does not name the archive", err)
				}
			}
			if !errors.Is(err, pxar.ErrCorrupt) || !strings.Contains(err.Error(), "metadata stream at offset") {
				t.Fatalf("error %v (open error %v): want a corruption error naming the offset", err, oerr)
			}
		})
	}
}

// TestCorruptChunk damages the stored metadata chunk: opening fails with
// an error naming the archive, the index, the offset and the chunk.
func TestCorruptChunk(t *testing.T) {
	src := t.TempDir()
	writeFile(t, src+"/f", []byte("x"))
	s := newStore(t)
	_, snap := backupTree(t, s, src, Options{})
	x, err := index.OpenDynamic(filepath.Join(s.SnapshotPath(snap), "root.mpxar.didx"))
	must(t, err)
	d, _, _ := x.Chunk(x.Len() - 1)
	x.Close()
	blob, err := os.ReadFile(s.ChunkPath(d))
	must(t, err)
	blob[len(blob)-1] ^= 0xff
	must(t, os.WriteFile(s.ChunkPath(d), blob, 0o644))
	err, _ = openErr(t, s, snap, "f")
	if !errors.Is(err, store.ErrCorruptChunk) || !strings.Contains(err.Error(), "root.pxar") ||
		!strings.Contains(err.Error(), "root.mpxar.didx") || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("error %v", err)
	}
}

// TestCorruptPrevious: when the previous snapshot's archive cannot be
// read, the next backup reads every file and is complete.
func TestCorruptPrevious(t *testing.T) {
	src := t.TempDir()
	fileTree(t, src)
	s := newStore(t)
	_, prev := backupTree(t, s, src, Options{ChunkSize: testAvg})
	// A change, so that the new metadata stream does not dedup against
	// the damaged one (a known chunk is trusted, as in PBS, until a
	// verification marks the snapshot failed).
	writeFile(t, src+"/d1/f00", randBytes(30000, 77))
	for _, file := range []string{"root.mpxar.didx", StatTableName("root.pxar")} {
		x, err := index.OpenDynamic(filepath.Join(s.SnapshotPath(prev), file))
		must(t, err)
		for i := 0; i < x.Len(); i++ {
			d, _, _ := x.Chunk(i)
			must(t, os.WriteFile(s.ChunkPath(d), []byte("garbage"), 0o644))
		}
		x.Close()
	}
	var log bytes.Buffer
	res, snap := backupTree(t, s, src, Options{ChunkSize: testAvg, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if res.ReadFiles != 30 || res.ReusedFiles != 0 || res.Errors != 0 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(log.String(), "backup: previous archive") {
		t.Errorf("no warning about the previous archive in Options.Logger: %q", log.String())
	}
	compareTree(t, openTree(t, s, snap), src, nil, nil)
}
