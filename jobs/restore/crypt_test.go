package restore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
)

var cryptGroup = store.Group{Type: "vm", ID: "crypt"}

// openImage opens snap's disk.img index as the restore command does.
func openImage(t *testing.T, s *store.Store, snap store.Snapshot) (index.Index, error) {
	t.Helper()
	m, err := s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	x, err := s.OpenSnapshotIndex(snap, m, "disk.img.fidx")
	if err == nil {
		t.Cleanup(func() { x.Close() })
	}
	return x, err
}

// An encrypted image restores byte for byte with its key, to a file
// (zero chunks known by their keyed digest become holes) and to a
// stream; without the key the index does not open, before anything is
// written.
func TestImageEncrypted(t *testing.T) {
	s := storetest.NewStore(t)
	k := crypttest.NewKey(t)
	img := slices.Concat(crypttest.Data("img"), make([]byte, 3*crypttest.ChunkSize), randBytes(777, 9))
	snap := crypttest.Backup(t, s, cryptGroup, time.Unix(1700000000, 0), crypttest.Image{Data: img}, k)

	x, err := openImage(t, crypttest.KeyedView(t, s, k), snap)
	if err != nil {
		t.Fatal(err)
	}
	if chunkcache.IndexKey(x) == nil {
		t.Fatal("the index of an encrypted snapshot has no key")
	}
	path := filepath.Join(t.TempDir(), "out")
	f, _ := os.Create(path)
	rep, err := Image(context.Background(), x, s, Target{File: f}, Options{Threads: 4})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, img) {
		t.Fatal("restored encrypted image differs")
	}
	if rep.ZeroBytes < 5*crypttest.ChunkSize {
		t.Errorf("zero chunks not known by their keyed digest: %d zero bytes", rep.ZeroBytes)
	}
	var out bytes.Buffer
	if _, err := Image(context.Background(), x, s, Target{Stream: &out}, Options{Threads: 2}); err != nil || !bytes.Equal(out.Bytes(), img) {
		t.Fatalf("to a stream: %v, equal %v", err, bytes.Equal(out.Bytes(), img))
	}

	_, err = openImage(t, s, snap)
	var km *store.KeyMissingError
	if !errors.As(err, &km) || km.Fingerprint != k.Fingerprint() || !strings.Contains(err.Error(), k.Fingerprint().Short()) {
		t.Fatalf("without the key: %v", err)
	}
}

// A chunk whose tag fails stops the restore with ErrAuth naming the
// offset; with IgnoreErrors its range is zeros, never its plaintext.
func TestImageEncryptedDamaged(t *testing.T) {
	s := storetest.NewStore(t)
	k := crypttest.NewKey(t)
	img := crypttest.Data("damaged")
	snap := crypttest.Backup(t, s, cryptGroup, time.Unix(1700000000, 0), crypttest.Image{Data: img}, k)
	x, err := openImage(t, crypttest.KeyedView(t, s, k), snap)
	if err != nil {
		t.Fatal(err)
	}
	d, start, end := x.Chunk(1)
	crypttest.FlipTag(t, s, d)

	path := filepath.Join(t.TempDir(), "out")
	f, _ := os.Create(path)
	_, err = Image(context.Background(), x, s, Target{File: f}, Options{Threads: 2})
	if !errors.Is(err, chunk.ErrAuth) || !strings.Contains(err.Error(), d.String()) {
		t.Fatalf("damaged chunk: %v", err)
	}
	rep, err := Image(context.Background(), x, s, Target{File: f}, Options{Threads: 2, IgnoreErrors: true})
	f.Close()
	if !errors.Is(err, ErrDamaged) || len(rep.Damaged) != 1 || rep.Damaged[0].Offset != start {
		t.Fatalf("ignore errors: %v %+v", err, rep)
	}
	got, _ := os.ReadFile(path)
	want := slices.Clone(img)
	clear(want[start:end])
	if !bytes.Equal(got, want) {
		t.Fatal("ignore errors: restored image is not the image with the damaged chunk zeroed")
	}
}

// A file archive of an encrypted snapshot restores through filearchive,
// which decrypts with the store's key.
func TestTreeEncrypted(t *testing.T) {
	ctx := context.Background()
	src := makeTree(t)
	s := storetest.NewStore(t)
	k := crypttest.NewKey(t)
	b, err := s.StartBackup(ctx, cryptGroup, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	if err := b.Encrypt(k); err != nil {
		t.Fatal(err)
	}
	if _, err := filearchive.AddArchive(ctx, b, "root.pxar", src, filearchive.Options{Workers: 2}); err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	snap := b.Snapshot()
	for d, kind := range crypttest.Chunks(t, s, snap, "root.mpxar.didx") {
		if !kind.Encrypted() {
			t.Fatalf("metadata chunk %s is %s", d, kind)
		}
	}

	ks := crypttest.KeyedView(t, s, k)
	m, err := ks.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	ar, err := store.FindArchive(m, "root.pxar")
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.NewCache(ks, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acc, closeAr, err := filearchive.Open(ctx, ks, snap, m, ar, c)
	if err != nil {
		t.Fatal(err)
	}
	defer closeAr()
	dst := filepath.Join(t.TempDir(), "dst")
	if rep, err := Tree(ctx, acc, acc.Root(), "", dst, TreeOptions{Threads: 4}); err != nil {
		t.Fatalf("%v %+v", err, rep.Failed)
	}
	if got, want := describe(t, dst), describe(t, src); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("restored tree differs\n got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// without the key, the archive does not open
	c2, _ := store.NewCache(s, 4<<20)
	defer c2.Close()
	m2, _ := s.ReadManifest(snap)
	if _, _, err := filearchive.Open(ctx, s, snap, m2, ar, c2); !errors.Is(err, store.ErrKeyMissing) {
		t.Fatalf("without the key: %v", err)
	}
}

// A signed-only image (a key, plain chunks) restores with the key, its
// zero chunks known by their plain digest.
func TestImageSignOnly(t *testing.T) {
	s := storetest.NewStore(t)
	k := crypttest.NewKey(t)
	img := slices.Concat(randBytes(3*cs, 21), make([]byte, 4*cs), randBytes(100, 22))
	snap := storetest.BackupImage(t, s, cryptGroup, time.Unix(1700000000, 0), storetest.Image{Data: img, ChunkSize: cs})
	crypttest.SignOnly(t, s, snap, k)
	if _, err := openImage(t, s, snap); !errors.Is(err, store.ErrKeyMissing) {
		t.Fatalf("without the key: %v", err)
	}
	x, err := openImage(t, crypttest.KeyedView(t, s, k), snap)
	if err != nil {
		t.Fatal(err)
	}
	if chunkcache.IndexKey(x) == nil {
		t.Fatal("the index of a signed snapshot has no key")
	}
	var out bytes.Buffer
	rep, err := Image(context.Background(), x, s, Target{Stream: &out}, Options{Threads: 2})
	if err != nil || !bytes.Equal(out.Bytes(), img) || rep.ZeroBytes != 4*cs {
		t.Fatalf("signed-only image: %v, equal %v, %d zero bytes", err, bytes.Equal(out.Bytes(), img), rep.ZeroBytes)
	}
}
