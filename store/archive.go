package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/index"
)

// ArchiveKind says how an archive is stored.
type ArchiveKind int

// Archive kinds.
const (
	ArchiveImage      ArchiveKind = iota + 1 // NAME.img.fidx
	ArchiveSplitPxar                         // NAME.mpxar.didx + NAME.ppxar.didx
	ArchiveSinglePxar                        // NAME.pxar.didx
	ArchiveBlob                              // NAME.blob
	ArchiveOther                             // any other .fidx/.didx
)

// Archive is an archive of a snapshot as the user names it.
type Archive struct {
	Name  string // disk.img, root.pxar, qemu.conf.blob
	Kind  ArchiveKind
	Files []string // its files in the snapshot directory
	Size  uint64   // data size (metadata stream for split pxar)
}

// Archives lists a finished snapshot's archives from its manifest.
func Archives(m *Manifest) []Archive {
	var out []Archive
	seen := map[string]bool{}
	for _, f := range m.Files {
		name, kind := archiveOf(f.Filename)
		if seen[name] {
			continue
		}
		seen[name] = true
		a := Archive{Name: name, Kind: kind, Files: []string{f.Filename}, Size: f.Size}
		if kind == ArchiveSplitPxar {
			base := strings.TrimSuffix(name, ".pxar")
			a.Files = []string{base + ".mpxar.didx", base + ".ppxar.didx"}
		}
		out = append(out, a)
	}
	return out
}

func archiveOf(file string) (string, ArchiveKind) {
	switch {
	case strings.HasSuffix(file, ".img.fidx"):
		return strings.TrimSuffix(file, ".fidx"), ArchiveImage
	case strings.HasSuffix(file, ".mpxar.didx"):
		return strings.TrimSuffix(file, ".mpxar.didx") + ".pxar", ArchiveSplitPxar
	case strings.HasSuffix(file, ".ppxar.didx"):
		return strings.TrimSuffix(file, ".ppxar.didx") + ".pxar", ArchiveSplitPxar
	case strings.HasSuffix(file, ".pxar.stat.didx"):
		// cairn's stat table of a split archive (ctime, inode per file)
		return strings.TrimSuffix(file, ".stat.didx"), ArchiveSplitPxar
	case strings.HasSuffix(file, ".pxar.didx"):
		return strings.TrimSuffix(file, ".didx"), ArchiveSinglePxar
	case strings.HasSuffix(file, ".blob"):
		return file, ArchiveBlob
	case strings.HasSuffix(file, ".fidx"), strings.HasSuffix(file, ".didx"):
		return strings.TrimSuffix(strings.TrimSuffix(file, ".fidx"), ".didx"), ArchiveOther
	}
	return file, ArchiveOther
}

// FindArchive looks an archive up by the name the user gave (with or
// without the index suffix).
func FindArchive(m *Manifest, name string) (Archive, error) {
	for _, a := range Archives(m) {
		if a.Name == name || strings.Contains(strings.Join(a.Files, "\x00")+"\x00", name+"\x00") {
			return a, nil
		}
	}
	var names []string
	for _, a := range Archives(m) {
		names = append(names, a.Name)
	}
	return Archive{}, fmt.Errorf("archive %q: %w (have: %s)", name, ErrNotFound, strings.Join(names, ", "))
}

// OpenSnapshotIndex opens one index file of a snapshot and checks it
// against the manifest: checksum and size. The index of an encrypted
// snapshot comes bound to its key (IndexKey), whose readers decrypt;
// without the key it is a *KeyMissingError (OpenCheckedIndex and
// OpenIndexFile open it without).
func (s *Store) OpenSnapshotIndex(snap Snapshot, m *Manifest, file string) (index.Index, error) {
	key, err := s.SnapshotKey(snap, m)
	if err != nil {
		return nil, err
	}
	x, err := s.openManifestIndex(snap, m, file)
	if err != nil || key == nil {
		return x, err
	}
	return &keyedIndex{Index: x, k: key}, nil
}

// openManifestIndex is OpenSnapshotIndex without the key.
func (s *Store) openManifestIndex(snap Snapshot, m *Manifest, file string) (index.Index, error) {
	fi, ok := m.File(file)
	if !ok {
		return nil, fmt.Errorf("snapshot %s: %s: %w in manifest", snap, file, ErrNotFound)
	}
	x, err := s.OpenIndexFile(snap, file)
	if err != nil {
		return nil, err
	}
	if CsumHex(x.Csum()) != fi.Csum || uint64(x.Size()) != fi.Size {
		x.Close()
		return nil, fmt.Errorf("%s: %w: checksum %s size %d, manifest says %s size %d", x.Path(), index.ErrFormat,
			CsumHex(x.Csum()), x.Size(), fi.Csum, fi.Size)
	}
	return x, nil
}

// keyedIndex is an index of an encrypted snapshot with its key.
type keyedIndex struct {
	index.Index
	k *crypt.Key
}

// Key is the snapshot's key (chunkcache.IndexKey).
func (x *keyedIndex) Key() *crypt.Key { return x.k }

// plainIndex is the index a keyedIndex wraps (x itself otherwise).
func plainIndex(x index.Index) index.Index {
	if k, ok := x.(*keyedIndex); ok {
		return k.Index
	}
	return x
}

// ReadBlob reads and decodes a snapshot's blob file, checking it against
// the manifest. An encrypted blob is decrypted with the snapshot's key
// (SnapshotKey: a *KeyMissingError without it). A blob is decoded as its
// magic says: PBS lists the plain rsa-encrypted.key.blob of an
// encrypted snapshot as encrypted, and it is read without the key.
func (s *Store) ReadBlob(snap Snapshot, m *Manifest, file string) ([]byte, error) {
	fi, ok := m.File(file)
	if !ok {
		return nil, fmt.Errorf("snapshot %s: %s: %w in manifest", snap, file, ErrNotFound)
	}
	path := filepath.Join(s.SnapshotPath(snap), file)
	if fi.Size > chunk.MaxBlobSize {
		return nil, fmt.Errorf("%s: %w: manifest gives it %d bytes, more than a blob may have", path, ErrCorruptChunk, fi.Size)
	}
	key, err := s.SnapshotKey(snap, m)
	if err != nil && !errors.Is(err, ErrKeyMissing) {
		return nil, err // the manifest itself is bad
	}
	keyErr := err
	blob, err := s.backend.ReadFile(context.Background(), SnapshotFile(snap, file), int64(fi.Size))
	if err != nil {
		var big *errTooLarge
		if errors.As(err, &big) {
			return nil, fmt.Errorf("%w: %w: larger than the manifest says", ErrCorruptChunk, err)
		}
		return nil, fmt.Errorf("read blob: %w", notFound(err))
	}
	if uint64(len(blob)) != fi.Size || CsumHex(sha256.Sum256(blob)) != fi.Csum {
		return nil, fmt.Errorf("%s: %w: size or checksum differs from the manifest", path, ErrCorruptChunk)
	}
	if kind, err := chunk.BlobKind(blob); err == nil && kind.Encrypted() && key == nil {
		if keyErr == nil { // a plain snapshot's manifest lists an encrypted blob
			keyErr = fmt.Errorf("%w: the manifest names no key", chunk.ErrEncrypted)
		}
		return nil, fmt.Errorf("%s: %w", path, keyErr)
	}
	data, err := chunk.DecodeBlobKey(nil, blob, key, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w: %w", path, ErrCorruptChunk, err)
	}
	return data, nil
}
