package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sync/errgroup"
)

// chunkSize is the data of one generated chunk.
const chunkSize = 16

// archive is the one archive of every generated snapshot.
const archive = "root.pxar.didx"

// chunkData is chunk i's data.
func chunkData(i int) []byte { return fmt.Appendf(nil, "s3gen%011d", i) }

// chunkKey is where the bucket keeps chunk d (as s3store lays it out).
func chunkKey(d chunk.Digest) string {
	s := d.String()
	return ".chunks/" + s[:4] + "/" + s
}

// putChunk stores data as a chunk.
func (g *gen) putChunk(ctx context.Context, data []byte) (chunk.Digest, error) {
	d := chunk.Sum(data)
	blob, err := chunk.EncodeBlob(nil, data, false)
	if err != nil {
		return d, err
	}
	if _, err := g.b.Put(ctx, chunkKey(d), objstore.Cond{}, blob); err != nil {
		return d, fmt.Errorf("chunk %s: %w", d, err)
	}
	g.progress("objects")
	return d, nil
}

// putChunks puts the chunks i < chunks for which want(i) holds.
func (g *gen) putChunks(ctx context.Context, want func(int) bool) error {
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(g.l.jobs)
	for i := 0; i < g.l.chunks; i++ {
		if !want(i) {
			continue
		}
		eg.Go(func() error {
			_, err := g.putChunk(ctx, chunkData(i))
			return err
		})
	}
	return eg.Wait()
}

// pxarEnds encodes a pxar archive of a directory holding one file
// "data" of size bytes and returns the stream before the file's content
// and after it: the same for every snapshot.
func pxarEnds(size int) (head, tail []byte, err error) {
	var buf bytes.Buffer
	mtime := pxar.Timestamp{Secs: 1577836800}
	root := &pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFDIR | 0o755, Mtime: mtime}}
	e, err := pxar.NewEncoder(&buf, nil, root)
	if err != nil {
		return nil, nil, err
	}
	file := &pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFREG | 0o644, Mtime: mtime}}
	if _, err := e.AddFile("data", file, uint64(size), bytes.NewReader(make([]byte, size))); err != nil {
		return nil, nil, err
	}
	end := int(e.MetadataPosition())
	if err := e.Close(); err != nil {
		return nil, nil, err
	}
	b := buf.Bytes()
	if end < size || end > len(b) {
		return nil, nil, fmt.Errorf("pxar stream of %d bytes: the file ends at %d", len(b), end)
	}
	return bytes.Clone(b[:end-size]), bytes.Clone(b[end:]), nil
}

// snapEnds are the chunks of the pxar stream around a snapshot's file.
type snapEnds struct {
	head, tail       chunk.Digest
	headLen, tailLen int
}

// putSnapshots puts every snapshot: its index, then its manifest.
func (g *gen) putSnapshots(ctx context.Context) error {
	head, tail, err := pxarEnds(g.l.refs * chunkSize)
	if err != nil {
		return err
	}
	var ends snapEnds
	ends.headLen, ends.tailLen = len(head), len(tail)
	if ends.head, err = g.putChunk(ctx, head); err != nil {
		return err
	}
	if ends.tail, err = g.putChunk(ctx, tail); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "s3gen")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	g.done.Store(0)
	g.start = time.Now()
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(max(1, g.l.jobs/2))
	for j := 0; j < g.l.per; j++ { // a group's snapshots in time order across groups
		for gi := 0; gi < g.l.groups; gi++ {
			eg.Go(func() error {
				return g.putSnapshot(ctx, filepath.Join(tmp, fmt.Sprintf("%d-%d.didx", gi, j)), gi, j, ends)
			})
		}
	}
	return eg.Wait()
}

// putSnapshot puts snapshot j of group gi, writing its index at tmp first.
func (g *gen) putSnapshot(ctx context.Context, tmp string, gi, j int, ends snapEnds) error {
	snap := store.Snapshot{Group: store.Group{Type: store.TypeHost, ID: fmt.Sprintf("g%03d", gi)},
		Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, j)}
	w, err := index.NewDynamicWriter(tmp)
	if err != nil {
		return err
	}
	add := func(d chunk.Digest, n int) {
		if err == nil {
			err = w.Add(d, n)
		}
	}
	add(ends.head, ends.headLen)
	first := gi*g.run + j*(g.run-g.l.refs)/(g.l.per-1)
	for k := range g.l.refs {
		add(chunk.Sum(chunkData(nth(first+k))), chunkSize)
	}
	add(ends.tail, ends.tailLen)
	if err != nil {
		w.Abort()
		return err
	}
	csum, size, err := w.Close()
	if err != nil {
		return err
	}
	idx, err := os.ReadFile(tmp)
	os.Remove(tmp)
	if err != nil {
		return err
	}
	if _, err := g.b.Put(ctx, store.SnapshotFile(snap, archive), objstore.Cond{}, idx); err != nil {
		return fmt.Errorf("snapshot %s: %w", snap, err)
	}
	m := &store.Manifest{BackupType: snap.Type, BackupID: snap.ID, BackupTime: snap.Time.Unix(),
		Files: []store.FileInfo{{Filename: archive, CryptMode: "none", Size: uint64(size), Csum: store.CsumHex(csum)}}}
	blob, err := store.EncodeManifest(snap, m)
	if err != nil {
		return err
	}
	if _, err := g.b.Put(ctx, store.SnapshotFile(snap, store.ManifestName), objstore.Cond{}, blob); err != nil {
		return fmt.Errorf("snapshot %s: manifest: %w", snap, err)
	}
	g.progress("snapshots")
	return nil
}
