// Package crypttest holds what the tests of the job kinds share to make
// and read encrypted snapshots: keys, stores holding them, encrypted
// backups written by the store's own writers (Backup.Encrypt), readers
// that decrypt, and ways to damage an encrypted chunk.
package crypttest

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/storetest"
)

// ChunkSize is the chunk size of the images Backup writes.
const ChunkSize = 64 << 10

// NewKey returns a random key, wiped when the test ends.
func NewKey(t testing.TB) *crypt.Key {
	t.Helper()
	k, err := crypt.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Wipe)
	return k
}

// KeyedView opens the store once more, holding keys: the view of a
// command given --keyfile.
func KeyedView(t testing.TB, s *store.Store, keys ...*crypt.Key) *store.Store {
	t.Helper()
	ks, err := store.Open(s.Root())
	if err != nil {
		t.Fatal(err)
	}
	ks.SetKeys(store.NewKeys(keys...))
	t.Cleanup(func() { ks.Close() })
	return ks
}

// Data is an image of every kind of encrypted chunk for name: random
// (encrypted as is), compressible (compressed, then encrypted) and zeros,
// 8 chunks of ChunkSize.
func Data(name string) []byte {
	r := storetest.RandBytes(name+"/z", ChunkSize/4)
	z := make([]byte, 2*ChunkSize)
	for i := 0; i < len(z)/64; i++ {
		copy(z[i*64:], r[i*8:i*8+8])
	}
	return slices.Concat(storetest.RandBytes(name, 3*ChunkSize), z, make([]byte, 2*ChunkSize),
		storetest.RandBytes(name+"/end", ChunkSize))
}

// Image is an encrypted snapshot's content for Backup.
type Image struct {
	Data      []byte            // the image disk.img
	ChunkSize int               // 0: ChunkSize
	Blobs     map[string][]byte // NAME.blob files beside it, plain data
}

// Backup writes an encrypted snapshot of g at time at holding img,
// through Backup.Encrypt and the store's writers; with key nil, a plain
// one (the same chunks, plain and zstd, to compare with).
func Backup(t testing.TB, s *store.Store, g store.Group, at time.Time, img Image, key *crypt.Key) store.Snapshot {
	t.Helper()
	cs := img.ChunkSize
	if cs == 0 {
		cs = ChunkSize
	}
	ctx := context.Background()
	b, err := s.StartBackup(ctx, g, at)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if key != nil {
		if err := b.Encrypt(key); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.AddImage(ctx, "disk.img", bytes.NewReader(img.Data), store.ImageOptions{ChunkSize: cs, Workers: 1}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(img.Blobs)) {
		if err := b.AddBlobData(name, img.Blobs[name]); err != nil {
			b.Abort()
			t.Fatal(err)
		}
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return b.Snapshot()
}

// ReadImage reads image archive file (NAME.img.fidx) of snap whole,
// through the store's reader: a store holding the key decrypts.
func ReadImage(t testing.TB, s *store.Store, snap store.Snapshot, file string) ([]byte, error) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	if err != nil {
		return nil, err
	}
	x, err := s.OpenSnapshotIndex(snap, m, file)
	if err != nil {
		return nil, err
	}
	defer x.Close()
	c, err := store.NewCache(s, 8<<20)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	r := chunkcache.NewReader(context.Background(), x, c, 0)
	return io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
}

// Chunks lists the distinct chunks of an index file of snap with their
// blob kinds.
func Chunks(t testing.TB, s *store.Store, snap store.Snapshot, file string) map[chunk.Digest]chunk.Kind {
	t.Helper()
	x, err := s.OpenIndexFile(snap, file)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	out := map[chunk.Digest]chunk.Kind{}
	for i := range x.Len() {
		d, _, _ := x.Chunk(i)
		blob, err := os.ReadFile(s.ChunkPath(d))
		if err != nil {
			t.Fatal(err)
		}
		if out[d], err = chunk.BlobKind(blob); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Kinds counts the chunks of each kind.
func Kinds(chunks map[chunk.Digest]chunk.Kind) map[chunk.Kind]int {
	n := map[chunk.Kind]int{}
	for _, k := range chunks {
		n[k]++
	}
	return n
}

// RewriteChunk replaces chunk d's file by edit(blob); with fixCRC the
// CRC of an encrypted blob is computed again, as a forger would.
func RewriteChunk(t testing.TB, s *store.Store, d chunk.Digest, fixCRC bool, edit func([]byte)) {
	t.Helper()
	blob, err := os.ReadFile(s.ChunkPath(d))
	if err != nil {
		t.Fatal(err)
	}
	edit(blob)
	if fixCRC {
		binary.LittleEndian.PutUint32(blob[8:12], crc32.ChecksumIEEE(blob[chunk.EncryptedHeaderSize:]))
	}
	if err := os.WriteFile(s.ChunkPath(d), blob, 0o644); err != nil {
		t.Fatal(err)
	}
}

// FlipTag changes a bit of an encrypted chunk's GCM tag, which its CRC
// does not cover.
func FlipTag(t testing.TB, s *store.Store, d chunk.Digest) {
	t.Helper()
	RewriteChunk(t, s, d, false, func(b []byte) { b[chunk.BlobHeaderSize+crypt.IVSize+3] ^= 1 })
}

// CPUTime is the CPU time (user and system) the process has used: what
// benchmarks compare plain and encrypted runs by on a shared machine,
// where elapsed time depends on the neighbours.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// SignOnly makes the plain snapshot snap a signed-only one, as PBS's
// --crypt-mode sign-only writes it: plain chunks and blobs, every file
// "sign-only", the manifest naming key and signed with it.
func SignOnly(t testing.TB, s *store.Store, snap store.Snapshot, key *crypt.Key) {
	t.Helper()
	err := s.UpdateManifest(context.Background(), snap, func(m *store.Manifest) error {
		for i := range m.Files {
			m.Files[i].CryptMode = store.CryptSignOnly
		}
		fp, err := json.Marshal(key.Fingerprint().String())
		if err != nil {
			return err
		}
		if m.Unprotected == nil {
			m.Unprotected = map[string]json.RawMessage{}
		}
		m.Unprotected["key-fingerprint"] = fp
		m.Signature = nil
		js, err := json.Marshal(m)
		if err != nil {
			return err
		}
		sum, err := key.ManifestSignature(js)
		if err != nil {
			return err
		}
		sig := hex.EncodeToString(sum[:])
		m.Signature = &sig
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
