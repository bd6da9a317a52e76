package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"testing"
	"testing/fstest"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

var (
	ctx   = context.Background()
	quiet = slog.New(slog.DiscardHandler)
)

func openPool(t *testing.T, dir string, opts PoolOptions) (*drive.Drive, *Pool) {
	t.Helper()
	d, err := drive.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	p, err := OpenPool(d, "pool", opts, quiet)
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}

// makeChunks returns n incompressible chunks of about size bytes.
func makeChunks(t *testing.T, seed uint64, n, size int) []Chunk {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]Chunk, n)
	for i := range out {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(r.Uint32())
		}
		blob, err := chunk.EncodeBlob(nil, data, false)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = Chunk{Digest: chunk.Sum(data), Blob: blob}
	}
	return out
}

func feed(chunks []Chunk) <-chan Chunk {
	ch := make(chan Chunk, 3)
	go func() {
		for _, c := range chunks {
			ch <- c
		}
		close(ch)
	}()
	return ch
}

var snapFS = fstest.MapFS{
	"index.json.blob": {Data: []byte(`{"files":[]}`), Mode: 0o644},
	"disk.img.fidx":   {Data: bytes.Repeat([]byte{1}, 4096+64), Mode: 0o644},
}
var snapFiles = []string{"index.json.blob", "disk.img.fidx"}

// writeSet writes snapshots of chunks in groups and closes the writer.
func writeSet(t *testing.T, p *Pool, opts WriterOptions, groups ...[]Chunk) *Writer {
	t.Helper()
	w, err := p.NewWriter(opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range groups {
		if err := w.WriteChunks(ctx, "st", feed(g)); err != nil {
			t.Fatalf("group %d: %v", i, err)
		}
		if err := w.WriteSnapshot(ctx, "st", "vm/1/snap"+string(rune('a'+i)), snapFS, snapFiles); err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
	}
	if err := w.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestMediaSetSpansTapes(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{TapeSize: 4 << 20, AutoCreate: true})
	chunks := makeChunks(t, 1, 18, 200<<10) // ~3.6 MB: more than one 4 MiB tape holds
	w := writeSet(t, p, WriterOptions{}, chunks[:9], chunks[9:])
	st := w.Stats()
	if st.Chunks != int64(len(chunks)) || st.Snapshots != 2 || len(st.Tapes) < 2 {
		t.Fatalf("stats %+v", st)
	}
	set := w.MediaSet()
	r, err := OpenSet(d, set.UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Members()) != len(st.Tapes) {
		t.Fatalf("members %d, tapes %v", len(r.Members()), st.Tapes)
	}
	// the second tape starts with its labels and the first tape's catalog
	m1 := r.Members()[1]
	if err := d.Load(m1.Label.LabelText); err != nil {
		t.Fatal(err)
	}
	l, sl, err := ReadLabels(d)
	if err != nil || l.UUID != m1.Label.UUID || sl.SeqNr != 1 || sl.UUID != set.UUID || sl.Pool != "pool" {
		t.Fatalf("labels of tape 2: %+v %+v %v", l, sl, err)
	}
	fr, h, js, err := openFile(d, l.LabelText, 2)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := format.OpenCatalogArchive(fr, h, js)
	if err != nil || ca.Info.Media != r.Members()[0].Label.UUID {
		t.Fatalf("file 2 of tape 2: %+v %v", ca, err)
	}
	fr.Close()
	// every chunk is found through the catalog and reads back identical
	want := map[chunk.Digest][]byte{}
	files := map[format.UUID]map[uint64]bool{}
	for _, c := range chunks {
		want[c.Digest] = c.Blob
		m, f, ok := r.Catalog().LookupChunk("st", c.Digest)
		if !ok {
			t.Fatalf("chunk %s not in catalog", c.Digest)
		}
		if files[m] == nil {
			files[m] = map[uint64]bool{}
		}
		files[m][f] = true
	}
	seen := 0
	for m, fs := range files {
		for f := range fs {
			err := r.ReadChunkArchive(ctx, m, f, func(d chunk.Digest, blob []byte) error {
				if !bytes.Equal(blob, want[d]) {
					t.Errorf("chunk %s differs", d)
				}
				seen++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if seen != len(chunks) {
		t.Fatalf("read %d chunks", seen)
	}
	m, f, ok := r.Catalog().LookupSnapshot("st", "vm/1/snapb")
	if !ok {
		t.Fatal("snapshot b not catalogued")
	}
	err = r.ReadSnapshotArchive(m, f, func(s *format.SnapshotArchiveReader) error {
		for _, name := range snapFiles {
			sf, err := s.Next()
			if err != nil || sf.Name != name {
				return err
			}
			b, _ := io.ReadAll(s)
			if !bytes.Equal(b, snapFS[name].Data) {
				t.Errorf("%s differs", name)
			}
		}
		_, err := s.Next()
		if err != io.EOF {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// rebuilding each tape's catalog from the tape gives the same bytes
	for _, m := range r.Members() {
		path := catalog.Path(CatalogDir(d), m.Label.UUID)
		before, _ := os.ReadFile(path)
		c, err := RebuildCatalog(ctx, d, m.Label.LabelText, quiet)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Fatalf("tape %s: rebuilt catalog differs (%d vs %d bytes)", m.Label.LabelText, len(before), len(after))
		}
	}
}

func TestAppendSession(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{TapeSize: 8 << 20, AutoCreate: true})
	chunks := makeChunks(t, 2, 6, 100<<10)
	w1 := writeSet(t, p, WriterOptions{}, chunks[:3])
	w2, err := p.NewWriter(WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w2.MediaSet().UUID != w1.MediaSet().UUID {
		t.Fatal("second session started a new media set")
	}
	if !w2.ContainsChunk("st", chunks[0].Digest) || w2.ContainsChunk("st", chunks[3].Digest) ||
		!w2.ContainsSnapshot("st", "vm/1/snapa") {
		t.Fatal("catalog of the first session not visible")
	}
	if err := w2.WriteChunks(ctx, "st", feed(chunks[3:])); err != nil {
		t.Fatal(err)
	}
	if err := w2.WriteSnapshot(ctx, "st", "vm/1/later", snapFS, snapFiles); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(w2.Stats().Tapes) != 1 || w2.Stats().Tapes[0] != w1.Stats().Tapes[0] {
		t.Fatalf("second session used tapes %v", w2.Stats().Tapes)
	}
	// the tape holds: labels, archive, snapshot, catalog archive (session
	// 1), archive, snapshot, catalog archive (session 2)
	if n, _ := d.FileCount(); n != 8 {
		t.Fatalf("tape has %d files", n)
	}
	w3, _ := p.NewWriter(WriterOptions{NewSet: true})
	if w3.MediaSet().UUID == w1.MediaSet().UUID || w3.ContainsChunk("st", chunks[0].Digest) {
		t.Fatal("new media set sees the old one")
	}
	w3.Close(ctx)
}

// A session that dies before committing leaves files the catalog does not
// list; the next session overwrites them.
func TestInterruptedSession(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{TapeSize: 8 << 20, AutoCreate: true})
	chunks := makeChunks(t, 3, 6, 100<<10)
	writeSet(t, p, WriterOptions{}, chunks[:2])
	w, _ := p.NewWriter(WriterOptions{})
	if err := w.WriteChunks(ctx, "st", feed(chunks[2:4])); err != nil {
		t.Fatal(err)
	}
	// crash: an unfinished file after the uncommitted archive
	fw, err := d.WriteFile()
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(make([]byte, 300<<10))
	fw.Close()
	d.Close()

	d2, p2 := openPool(t, dir, PoolOptions{TapeSize: 8 << 20})
	w2, err := p2.NewWriter(WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w2.ContainsChunk("st", chunks[2].Digest) {
		t.Fatal("uncommitted chunk is in the catalog")
	}
	if err := w2.WriteChunks(ctx, "st", feed(chunks[2:])); err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// labels, archive, snapshot, catalog archive, then the overwritten
	// uncommitted archive (5) and the new catalog archive (6)
	if n, _ := d2.FileCount(); n != 7 {
		t.Fatalf("tape has %d files", n)
	}
	r, err := OpenSet(d2, w2.MediaSet().UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, c := range chunks {
		if !r.Catalog().ContainsChunk("st", c.Digest) {
			t.Fatalf("chunk %s missing", c.Digest)
		}
	}
}

func TestFullTapeNoOther(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{})
	if err := d.CreateTape("only", 2<<20); err != nil {
		t.Fatal(err)
	}
	w, err := p.NewWriter(WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = w.WriteChunks(ctx, "st", feed(makeChunks(t, 4, 12, 200<<10)))
	if !errors.Is(err, ErrNoTape) || !bytes.Contains([]byte(err.Error()), []byte("tape only is full")) {
		t.Fatalf("full tape: %v", err)
	}
	w.Close(ctx)
	// what was written before is catalogued and durable
	r, err := OpenSet(d, w.MediaSet().UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if c := r.Catalog().Catalogs()[0]; c.Chunks("st") == 0 || c.Chunks("st") != int(w.Stats().Chunks) {
		t.Fatalf("catalog holds %d chunks, writer wrote %d", c.Chunks("st"), w.Stats().Chunks)
	}
}

func TestChunkLargerThanTape(t *testing.T) {
	dir := t.TempDir()
	_, p := openPool(t, dir, PoolOptions{TapeSize: 1 << 20, AutoCreate: true})
	w, _ := p.NewWriter(WriterOptions{})
	err := w.WriteChunks(ctx, "st", feed(makeChunks(t, 5, 1, 2<<20)))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("huge chunk: %v", err)
	}
	w.Close(ctx)
}

func TestCatalogDisagrees(t *testing.T) {
	dir := t.TempDir()
	d, p := openPool(t, dir, PoolOptions{TapeSize: 8 << 20, AutoCreate: true})
	chunks := makeChunks(t, 6, 4, 100<<10)
	w := writeSet(t, p, WriterOptions{}, chunks)
	// replace file 2 (the chunk archive) behind the catalog's back
	if err := d.MoveToFile(2); err != nil {
		t.Fatal(err)
	}
	fw, _ := d.WriteFile()
	a, _ := format.NewChunkArchiveWriter(fw, "st", 0)
	a.WriteChunk(chunks[0].Digest, chunks[0].Blob)
	a.Finish()
	r, err := OpenSet(d, w.MediaSet().UUID)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m, f, _ := r.Catalog().LookupChunk("st", chunks[1].Digest)
	err = r.ReadChunkArchive(ctx, m, f, func(chunk.Digest, []byte) error { return nil })
	if !errors.Is(err, ErrMismatch) {
		t.Fatalf("read a replaced file: %v", err)
	}
	if _, err := p.NewWriter(WriterOptions{}); err != nil {
		t.Fatal(err)
	}
	w2, _ := p.NewWriter(WriterOptions{})
	if err := w2.WriteChunks(ctx, "st", feed(makeChunks(t, 7, 1, 1000))); !errors.Is(err, ErrMismatch) {
		t.Fatalf("append to a tape that disagrees with its catalog: %v", err)
	}
}
