package storesync

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
)

// failedCopy syncs a to b expecting the snapshot to fail with an error
// containing want, and nothing of it in b, finished or not.
func failedCopy(t *testing.T, a, b *store.Store, want string) Report {
	t.Helper()
	rep, errs, err := run(t, a, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsFailed != 1 || len(errs) == 0 || !strings.Contains(errs[0], want) {
		t.Fatalf("want a failure naming %q: %+v %q", want, rep, errs)
	}
	if infos, _ := b.Snapshots(vm1); len(infos) != 0 {
		t.Fatalf("target has %v after a failed copy", infos)
	}
	return rep
}

// TestSyncRefusesCorruptChunk: a chunk of the source whose data does not
// hash to its digest (a good blob of other data) is named and not copied.
func TestSyncRefusesCorruptChunk(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 1)
	d := storetest.ChunksOf(t, a, snaps[0])[5]
	other, err := chunk.EncodeBlob(nil, storetest.RandBytes("other", chunkSize), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a.ChunkPath(d), other, 0o644); err != nil {
		t.Fatal(err)
	}
	failedCopy(t, a, b, d.String())
	if storetest.HasChunk(t, b, d) {
		t.Fatal("the corrupt chunk reached the target")
	}
}

// TestSyncRefusesMissingChunk: a chunk missing in the source is named.
func TestSyncRefusesMissingChunk(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 1)
	d := storetest.ChunksOf(t, a, snaps[0])[7]
	if err := os.Remove(a.ChunkPath(d)); err != nil {
		t.Fatal(err)
	}
	failedCopy(t, a, b, d.String())
}

// TestSyncRefusesEncryptedChunkInPlainArchive: a blob that claims to be
// encrypted cannot be checked against its digest; it is refused where
// the manifest says the archive is not encrypted.
func TestSyncRefusesEncryptedChunkInPlainArchive(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 1)
	d := storetest.ChunksOf(t, a, snaps[0])[2]
	blob, err := os.ReadFile(a.ChunkPath(d))
	if err != nil {
		t.Fatal(err)
	}
	enc := append([]byte(nil), blob...)
	copy(enc, chunk.MagicEncrypted[:]) // CRC no longer matters: refused before
	if err := os.WriteFile(a.ChunkPath(d), enc, 0o644); err != nil {
		t.Fatal(err)
	}
	failedCopy(t, a, b, "encrypted")
}

// TestSyncRefusesIndexNotMatchingManifest: an index whose entries were
// changed (its header still matching the manifest), or whose manifest
// checksum is wrong, is refused.
func TestSyncRefusesIndexNotMatchingManifest(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 1)
	path := filepath.Join(a.SnapshotPath(snaps[0]), "disk.img.fidx")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// entry 0 now names entry 1's chunk: every chunk is good, but the
	// index is not the one the manifest committed to
	bad := append([]byte(nil), data...)
	copy(bad[4096:4096+32], data[4096+32:4096+64])
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	failedCopy(t, a, b, store.ErrSyncMismatch.Error())

	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	err = a.UpdateManifest(t.Context(), snaps[0], func(m *store.Manifest) error {
		m.Files[0].Csum = strings.Repeat("0", 64)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failedCopy(t, a, b, index.ErrFormat.Error())
}

// TestSyncRefusesBlobNotMatchingManifest: a blob file changed after its
// manifest was written is refused.
func TestSyncRefusesBlobNotMatchingManifest(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 1)
	path := filepath.Join(a.SnapshotPath(snaps[0]), "qemu.conf.blob")
	other, _ := chunk.EncodeBlob(nil, []byte("config vm/666"), true)
	if err := os.WriteFile(path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	failedCopy(t, a, b, "qemu.conf.blob")
}

// TestSyncRefusesStrangeFile: a manifest listing a file that is neither
// an index nor a blob (or a name that would escape) is refused.
func TestSyncRefusesStrangeFile(t *testing.T) {
	for _, name := range []string{"notes.txt", "../x.blob"} {
		a, b := storetest.NewStore(t), storetest.NewStore(t)
		snaps := backups(t, a, vm1, 1)
		err := a.UpdateManifest(t.Context(), snaps[0], func(m *store.Manifest) error {
			m.Files = append(m.Files, store.FileInfo{Filename: name, CryptMode: "none", Csum: strings.Repeat("1", 64)})
			return nil
		})
		if err != nil {
			// the store refuses to write it: read the manifest back as hostile
			if !errors.Is(err, store.ErrBadManifest) {
				t.Fatal(err)
			}
			continue
		}
		failedCopy(t, a, b, "")
	}
}
