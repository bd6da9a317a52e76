package store

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/internal/fsutil"
)

// What a copy of a snapshot from another store (jobs/sync) needs of a
// Backup beyond what a backup from files does: the source's index and
// blob files byte for byte, checked against the source's manifest, and
// that manifest written last in place of a new one. Everything else (the
// locks, the writer's registration, chunk reuse and the manifest last)
// is the Backup's own.

// ErrSyncMismatch is a source snapshot file that does not match its
// manifest: it is refused, never copied.
var ErrSyncMismatch = errors.New("file does not match its manifest")

// InsertChunkContext is InsertChunk under ctx: a remote store's upload
// ends when ctx does.
func (s *Store) InsertChunkContext(ctx context.Context, d chunk.Digest, blob []byte) (existed bool, err error) {
	return s.insertChunk(ctx, d, blob, nil)
}

// IOParallelism is how many chunk requests a reader or writer of the
// store should keep in flight: 0 where each is a local system call.
func (s *Store) IOParallelism() int { return s.ioParallelism() }

// KnownChunks returns the digests of the index file called name of its
// reference (Reference: the group's newest usable snapshot that has
// that file), nil when it has none: the chunks the backup may take as
// present (ReuseChunk). The error is a lease update that failed.
func (b *Backup) KnownChunks(ctx context.Context, name string) (KnownSet, error) {
	ref, ok, err := b.Reference(ctx, name)
	if err != nil || !ok {
		return nil, err
	}
	return b.knownChunks(ref, name), nil
}

// OpenCheckedIndex opens an index file of snap as OpenSnapshotIndex
// does, without a key (it does not read chunks), and also recomputes its checksum over its entries: an index whose
// entries were changed behind a header that still matches the manifest
// is refused (ErrSyncMismatch), so what its entries list is what the
// manifest committed to.
func (s *Store) OpenCheckedIndex(snap Snapshot, m *Manifest, file string) (index.Index, error) {
	x, err := s.openManifestIndex(snap, m, file)
	if err != nil {
		return nil, err
	}
	sum, err := indexEntriesSum(x)
	if err == nil && CsumHex(sum) != CsumHex(x.Csum()) {
		err = fmt.Errorf("%s: %w: its entries hash to %s, its header and manifest say %s",
			x.Path(), ErrSyncMismatch, CsumHex(sum), CsumHex(x.Csum()))
	}
	if err != nil {
		x.Close()
		return nil, err
	}
	return x, nil
}

// indexEntriesSum is the SHA-256 of an index's entries (its checksum).
func indexEntriesSum(x index.Index) ([32]byte, error) {
	var sum [32]byte
	switch v := plainIndex(x).(type) {
	case *index.Fixed:
		sum = v.ComputeCsum()
	case *index.Dynamic:
		sum = v.ComputeCsum()
	default:
		return sum, fmt.Errorf("%s: %w: index of type %T cannot be checked", x.Path(), index.ErrFormat, x)
	}
	return sum, x.Err()
}

// AddIndexCopy writes x, an index of another store opened with
// OpenCheckedIndex, into the backup byte for byte under fi.Filename
// (temp + rename) and records fi, the source manifest's entry. The bytes
// are hashed as they are copied: a file that changed since it was
// checked is refused (ErrSyncMismatch) and nothing is added.
func (b *Backup) AddIndexCopy(x index.Index, fi FileInfo) error {
	if err := CheckArchiveName(fi.Filename); err != nil {
		return err
	}
	if _, ok := index.Kind(fi.Filename); !ok {
		return fmt.Errorf("archive %s: %w: not an index name", fi.Filename, ErrBadName)
	}
	err := fsutil.WriteAtomic(filepath.Join(b.dir, fi.Filename), func(f *os.File) error { return copyIndexBytes(f, x, fi) })
	if err != nil {
		return err
	}
	return b.AddFile(fi)
}

// copyIndexBytes writes index x to f, checking the header's checksum
// and the entries' hash as copied against fi.
func copyIndexBytes(f *os.File, x index.Index, fi FileInfo) error {
	hdrSum, sum, err := index.Copy(f, plainIndex(x))
	if err != nil {
		return err
	}
	if CsumHex(sum) != fi.Csum || CsumHex(hdrSum) != fi.Csum {
		return fmt.Errorf("%s: %w: entries hash to %s, header says %s, manifest %s",
			x.Path(), ErrSyncMismatch, CsumHex(sum), CsumHex(hdrSum), fi.Csum)
	}
	return nil
}

// ReadBlobFile reads a blob file of snap as it is stored, checked against
// the manifest m (size and SHA-256) and decodable (its CRC, and its data
// unless encrypted); for a copy byte for byte.
func (s *Store) ReadBlobFile(snap Snapshot, m *Manifest, file string) ([]byte, error) {
	fi, ok := m.File(file)
	if !ok {
		return nil, fmt.Errorf("snapshot %s: %s: %w in manifest", snap, file, ErrNotFound)
	}
	path := filepath.Join(s.SnapshotPath(snap), file)
	if fi.Size > chunk.MaxBlobSize {
		return nil, fmt.Errorf("%s: %w: manifest gives it %d bytes, more than a blob may have", path, ErrSyncMismatch, fi.Size)
	}
	blob, err := s.backend.ReadFile(context.Background(), SnapshotFile(snap, file), int64(fi.Size))
	if err != nil {
		var big *errTooLarge
		if errors.As(err, &big) {
			return nil, fmt.Errorf("%w: %w: larger than the manifest says", ErrSyncMismatch, err)
		}
		return nil, fmt.Errorf("read blob: %w", notFound(err))
	}
	if uint64(len(blob)) != fi.Size || CsumHex(sha256.Sum256(blob)) != fi.Csum {
		return nil, fmt.Errorf("%s: %w: size or checksum differs", path, ErrSyncMismatch)
	}
	kind, err := chunk.CheckCRC(blob)
	if err == nil && !kind.Encrypted() {
		_, err = chunk.DecodeBlob(nil, blob, 0)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return blob, nil
}

// AddBlobCopy writes blob, a blob file of another store read with
// ReadBlobFile, under fi.Filename and records fi, the source manifest's
// entry (its crypt mode kept).
func (b *Backup) AddBlobCopy(blob []byte, fi FileInfo) error {
	if err := CheckArchiveName(fi.Filename); err != nil {
		return err
	}
	if uint64(len(blob)) != fi.Size || CsumHex(sha256.Sum256(blob)) != fi.Csum {
		return fmt.Errorf("archive %s: %w: size or checksum differs", fi.Filename, ErrSyncMismatch)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(b.dir, fi.Filename), blob); err != nil {
		return err
	}
	return b.AddFile(fi)
}

// SetManifestBase makes Finish write m's fields beside the files added:
// a copied snapshot keeps its source's manifest (signature, unprotected
// fields such as notes, fields this version does not know). Its file
// list is not taken: Finish lists the files added, and fails unless they
// are m's files exactly. The verify state is the source store's, not
// this one's, and is dropped.
func (b *Backup) SetManifestBase(m *Manifest) {
	c := *m
	c.Files = slices.Clone(m.Files)
	for i := range c.Files {
		if c.Files[i].CryptMode == "" {
			c.Files[i].CryptMode = "none" // as AddFile records it
		}
	}
	c.Unprotected = maps.Clone(m.Unprotected)
	delete(c.Unprotected, "verify_state")
	c.Extra = maps.Clone(m.Extra)
	b.base = &c
}

// manifest is what Finish writes: the files added, with the base's
// other fields when SetManifestBase gave one.
func (b *Backup) manifest() (*Manifest, error) {
	m := &Manifest{Unprotected: map[string]json.RawMessage{}}
	if b.base != nil {
		if err := sameFiles(b.base.Files, b.files); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", b.snap, err)
		}
		m = b.base
		if m.Unprotected == nil {
			m.Unprotected = map[string]json.RawMessage{}
		}
	}
	m.BackupType, m.BackupID, m.BackupTime = b.snap.Type, b.snap.ID, b.snap.Time.Unix()
	if b.stats != nil {
		m.SetChunkUploadStats(*b.stats)
	}
	m.Files = b.files
	if m.Files == nil {
		m.Files = []FileInfo{}
	}
	if b.key != nil {
		if err := signManifest(b.snap, m, b.key); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// sameFiles checks that the files added are the base manifest's, in its
// order.
func sameFiles(want, got []FileInfo) error {
	if len(want) != len(got) {
		return fmt.Errorf("%w: %d files added, the manifest lists %d", ErrSyncMismatch, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Errorf("%w: file %d is %+v, the manifest lists %+v", ErrSyncMismatch, i, got[i], want[i])
		}
	}
	return nil
}
