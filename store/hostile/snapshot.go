package hostile

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sys/unix"
)

// Content returns what a good index at path holds: the data of the
// chunks of c it lists, in its order.
func Content(path string, c []Chunk) ([]byte, error) {
	x, err := index.Open(path)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	data := map[chunk.Digest][]byte{}
	for _, ch := range c {
		data[ch.Digest] = ch.Data
	}
	var out []byte
	for i := range x.Len() {
		d, _, _ := x.Chunk(i)
		b, ok := data[d]
		if !ok {
			return nil, fmt.Errorf("%s: entry %d: chunk %s is not among those given", path, i, d)
		}
		out = append(out, b...)
	}
	return out, x.Err()
}

// BlobFile is the blob of the snapshot WriteFIFOs makes with a FIFO blob.
const BlobFile = "qemu.conf.blob"

// WriteFIFOs writes two snapshots whose files are FIFOs, which an open for
// reading would wait on for a writer forever: in group mg the manifest
// (written, then replaced), in group bg the blob BlobFile (the manifest
// gives it 0 bytes, which is what a FIFO's stat says).
func WriteFIFOs(ctx context.Context, s *store.Store, mg, bg store.Group, t time.Time) (manifest, blob store.Snapshot, err error) {
	if manifest, err = writeSnapshot(ctx, s, mg, t, func(string) ([]store.FileInfo, error) { return nil, nil }); err != nil {
		return
	}
	path := filepath.Join(s.SnapshotPath(manifest), store.ManifestName)
	if err = os.Remove(path); err == nil {
		err = unix.Mkfifo(path, 0o644)
	}
	if err != nil {
		return
	}
	blob, err = writeSnapshot(ctx, s, bg, t, func(dir string) ([]store.FileInfo, error) {
		err := unix.Mkfifo(filepath.Join(dir, BlobFile), 0o644)
		return []store.FileInfo{{Filename: BlobFile, Csum: store.CsumHex(sha256.Sum256(nil))}}, err
	})
	return manifest, blob, err
}

// WriteGood writes a good snapshot of group g at t whose disk.img.fidx
// and data.didx both list chunks c in order (all of ChunkSize bytes but
// the last). It returns the data both archives hold.
func WriteGood(ctx context.Context, s *store.Store, g store.Group, t time.Time, c []Chunk) (store.Snapshot, []byte, error) {
	var want []byte
	for _, ch := range c {
		want = append(want, ch.Data...)
	}
	snap, err := writeSnapshot(ctx, s, g, t, func(dir string) ([]store.FileInfo, error) {
		fw, err := index.NewFixedWriter(filepath.Join(dir, FixedFile), ChunkSize)
		if err != nil {
			return nil, err
		}
		dw, err := index.NewDynamicWriter(filepath.Join(dir, DynamicFile))
		if err != nil {
			fw.Abort()
			return nil, err
		}
		for _, ch := range c {
			fw.Add(ch.Digest, len(ch.Data))
			dw.Add(ch.Digest, len(ch.Data))
		}
		fcsum, fsize, ferr := fw.Close()
		dcsum, dsize, derr := dw.Close()
		return []store.FileInfo{
			{Filename: FixedFile, Size: uint64(fsize), Csum: store.CsumHex(fcsum)},
			{Filename: DynamicFile, Size: uint64(dsize), Csum: store.CsumHex(dcsum)},
		}, errors.Join(ferr, derr)
	})
	return snap, want, err
}

// WriteCryptLie writes a snapshot of group g at t whose data.didx lists
// the plain chunks c while its manifest says the file is encrypted: the
// manifest lies, the chunks are good.
func WriteCryptLie(ctx context.Context, s *store.Store, g store.Group, t time.Time, c []Chunk) (store.Snapshot, error) {
	return writeSnapshot(ctx, s, g, t, func(dir string) ([]store.FileInfo, error) {
		dw, err := index.NewDynamicWriter(filepath.Join(dir, DynamicFile))
		if err != nil {
			return nil, err
		}
		for _, ch := range c {
			dw.Add(ch.Digest, len(ch.Data))
		}
		csum, size, err := dw.Close()
		return []store.FileInfo{{Filename: DynamicFile, CryptMode: "encrypt", Size: uint64(size), Csum: store.CsumHex(csum)}}, err
	})
}

// writeSnapshot starts a backup, lets write fill its directory and
// finishes it with the files write returns.
func writeSnapshot(ctx context.Context, s *store.Store, g store.Group, t time.Time, write func(dir string) ([]store.FileInfo, error)) (store.Snapshot, error) {
	b, err := s.StartBackup(ctx, g, t)
	if err != nil {
		return store.Snapshot{}, err
	}
	b.Sync = store.SyncNone
	files, err := write(b.Dir())
	for _, f := range files {
		if err == nil {
			err = b.AddFile(f)
		}
	}
	if err != nil {
		b.Abort()
		return store.Snapshot{}, err
	}
	if err := b.Finish(); err != nil {
		return store.Snapshot{}, err
	}
	return b.Snapshot(), nil
}
