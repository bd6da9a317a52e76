package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sys/unix"
)

// SyncLevel says how a backup makes its data durable before the manifest
// marks it finished.
type SyncLevel int

// Sync levels, as PBS names them.
const (
	SyncFilesystem SyncLevel = iota // syncfs at the end (default)
	SyncNone
)

// Backup is one snapshot being written. Until Finish or Abort it is a
// registered writer (RegisterWriter) and holds the store's shared lock,
// the group's backup lock, its new snapshot's lock exclusively and its
// archives' references shared (backup_ref.go). Until Finish writes
// the manifest the snapshot is unfinished and never shown as complete.
type Backup struct {
	ctx    context.Context // StartBackup's: a remote store's Finish uploads under it
	s      *Store
	snap   Snapshot
	dir    string
	locks  []*Lock
	writer *Writer // registered for GC's oldest-writer rule
	files  []FileInfo
	base   *Manifest // SetManifestBase's: a copied snapshot's manifest
	stats  *ChunkUploadStats
	key    *crypt.Key // Encrypt's (keys.go); nil for a plain backup
	// refs holds each archive's reference once picked, bases the
	// snapshots they are (locked shared, named in a remote writer's
	// lease): backup_ref.go.
	refMu sync.Mutex
	refs  map[string]reference
	bases []Snapshot
	ended bool // Finish or Abort: no more references
	dry   bool // StartDryRun's: no locks, no writer, dir outside the store
	Sync  SyncLevel
}

// StartBackup creates the snapshot directory of g at t (now, once the
// locks are taken, when zero). As in PBS, t must be newer than every
// snapshot of the group, finished or not, not before MinBackupTime, and
// at most MaxFutureTime ahead of the clock: otherwise ErrBadTime.
func (s *Store) StartBackup(ctx context.Context, g Group, t time.Time) (*Backup, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if !t.IsZero() {
		if err := CheckBackupTime(t); err != nil {
			return nil, err
		}
	}
	w, err := s.registerWriter(ctx) // before any chunk is looked at: GC's oldest-writer bound
	if err != nil {
		return nil, err
	}
	b := &Backup{ctx: ctx, s: s, writer: w}
	plock, err := s.LockShared(ctx)
	if err != nil {
		b.unlock()
		return nil, err
	}
	b.locks = append(b.locks, plock)
	glock, err := s.LockGroup(ctx, g)
	if err != nil {
		b.unlock()
		return nil, err
	}
	b.locks = append(b.locks, glock)
	if err := s.meta.RefreshGroup(ctx, g); err != nil { // a remote store: the bucket's snapshots of g
		b.release(g)
		return nil, err
	}
	snap, err := s.backupTime(ctx, g, t)
	if err != nil {
		b.release(g)
		return nil, err
	}
	b.snap, b.dir = snap, s.SnapshotPath(snap)
	if err := os.Mkdir(b.dir, 0o755); err != nil {
		b.release(g)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("snapshot %s: %w", snap, ErrExists)
		}
		return nil, fmt.Errorf("snapshot %s: %w", snap, err)
	}
	// the new snapshot is ours alone until Finish or Abort: nothing removes it
	slock, err := s.lockSnapshot(ctx, snap, true, 0)
	if err != nil {
		b.release(g)
		return nil, err
	}
	b.locks = append(b.locks, slock)
	return b, nil
}

func (b *Backup) unlock() {
	b.refMu.Lock()
	b.ended = true // no reference is picked once the locks are gone
	b.refMu.Unlock()
	for i := len(b.locks) - 1; i >= 0; i-- {
		b.locks[i].Unlock()
	}
	b.locks = nil
	b.writer.Done()
}

// Snapshot is the snapshot being written.
func (b *Backup) Snapshot() Snapshot { return b.snap }

// Store is the store written to.
func (b *Backup) Store() *Store { return b.s }

// WriterLease is the lease of the backup's writer in a remote store's
// bucket (MetaStore.RegisterWriter); nil on a local store.
func (b *Backup) WriterLease() *objstore.Lease { return b.writer.lease }

// Leases are the backup's leases in a remote store's bucket: its
// writer's and its group's.
func (b *Backup) Leases() []*objstore.Lease {
	out := []*objstore.Lease{b.writer.lease}
	for _, l := range b.locks {
		if l.lease != nil {
			out = append(out, l.lease)
		}
	}
	return out
}

// Dir is the snapshot directory.
func (b *Backup) Dir() string { return b.dir }

// CheckArchiveName rejects file names that could escape the snapshot directory
// or clash with the manifest.
func CheckArchiveName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") ||
		name == ManifestName || strings.HasPrefix(name, ".") {
		return fmt.Errorf("archive name %q: %w", name, ErrBadName)
	}
	return nil
}

// AddFile records a finished file (index or blob) in the manifest.
func (b *Backup) AddFile(fi FileInfo) error {
	if err := CheckArchiveName(fi.Filename); err != nil {
		return err
	}
	if _, dup := b.manifestFile(fi.Filename); dup {
		return fmt.Errorf("archive %s: %w in snapshot %s", fi.Filename, ErrExists, b.snap)
	}
	switch {
	case b.key != nil:
		fi.CryptMode = CryptEncrypt // every file of an encrypted backup, as PBS lists them
	case fi.CryptMode == "":
		fi.CryptMode = CryptNone
	}
	b.files = append(b.files, fi)
	return nil
}

func (b *Backup) manifestFile(name string) (FileInfo, bool) {
	for _, f := range b.files {
		if f.Filename == name {
			return f, true
		}
	}
	return FileInfo{}, false
}

// AddBlob stores blob, a DataBlob as it is to be stored, as NAME.blob.
// In an encrypted backup it is listed as encrypted, whatever its magic
// (PBS lists its plain rsa-encrypted.key.blob so); a plain backup takes
// no encrypted blob.
func (b *Backup) AddBlob(name string, blob []byte) error {
	if err := CheckArchiveName(name); err != nil {
		return err
	}
	kind, err := chunk.CheckCRC(blob)
	if err != nil {
		return fmt.Errorf("blob archive %s: %w", name, err)
	}
	if kind.Encrypted() && b.key == nil {
		return fmt.Errorf("blob archive %s: %w in a plain backup", name, chunk.ErrEncrypted)
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(b.dir, name), blob); err != nil {
		return err
	}
	return b.AddFile(FileInfo{Filename: name, Size: uint64(len(blob)), Csum: CsumHex(sha256.Sum256(blob))})
}

// MaxBlobData is the most data a blob archive takes: the DataBlob that
// holds it (header included, stored uncompressed at worst) must fit in
// chunk.MaxBlobSize, PBS's limit for every blob.
const MaxBlobData = chunk.MaxBlobSize - chunk.BlobHeaderSize

// ErrBlobTooLarge is data too large for a blob archive.
var ErrBlobTooLarge = fmt.Errorf("more than a blob archive holds (%d bytes)", MaxBlobData)

// AddBlobData stores data as the blob archive name (NAME.blob): a
// DataBlob, zstd-compressed unless that does not make it smaller, with
// its CRC, recorded in the manifest with its size and SHA-256 like the
// manifest's other blobs.
func (b *Backup) AddBlobData(name string, data []byte) error {
	if !strings.HasSuffix(name, ".blob") {
		return fmt.Errorf("blob archive %q: %w: name must end in .blob", name, ErrBadName)
	}
	if len(data) > MaxBlobData || (b.key != nil && len(data) > chunk.MaxBlobSize-chunk.EncryptedHeaderSize) {
		return fmt.Errorf("blob archive %s: %d bytes: %w", name, len(data), ErrBlobTooLarge)
	}
	var blob []byte
	var err error
	if b.key != nil {
		blob, err = chunk.EncodeEncryptedBlob(nil, data, b.key, true)
	} else {
		blob, err = chunk.EncodeBlob(nil, data, true)
	}
	if err != nil {
		return fmt.Errorf("blob archive %s: %w", name, err)
	}
	return b.AddBlob(name, blob)
}

// Finish makes the data durable and writes the manifest.
func (b *Backup) Finish() error {
	defer b.unlock()
	if b.dry {
		return os.RemoveAll(b.dir)
	}
	if b.Sync == SyncFilesystem {
		if err := syncfs(b.dir); err != nil {
			return fmt.Errorf("snapshot %s: %w", b.snap, err)
		}
	}
	m, err := b.manifest()
	if err != nil {
		return err
	}
	return b.s.meta.Publish(b.ctx, b, m)
}

// Abort removes the unfinished snapshot and releases the locks. A group
// left without snapshots (an interrupted first backup's) goes too, under
// the group lock Abort still holds, as ForgetGroup removes one: it showed
// as an empty directory in the mount though no listing named it.
func (b *Backup) Abort() {
	os.RemoveAll(b.dir)
	b.release(b.snap.Group)
}

// release drops group g when it has no snapshot (the backup made it, or
// an earlier one left it empty) and releases the locks; b holds g's lock.
func (b *Backup) release(g Group) {
	b.s.DropEmptyGroup(g)
	b.unlock()
}

func syncfs(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, err)
	}
	return nil
}
