package fs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"golang.org/x/sys/unix"
)

// sparseImg is an image of chunks of testChunk bytes, all zeros where
// zero says, then a tail of tail bytes (zeros when tailZero).
type sparseImg struct {
	zero     []bool
	tail     int
	tailZero bool
}

func (im sparseImg) data(seed uint64) []byte {
	var b []byte
	for i, z := range im.zero {
		c := make([]byte, testChunk)
		if !z {
			c = randomData(seed+uint64(i), testChunk, testChunk/4, testChunk/8) // a zero run inside data stays data
		}
		b = append(b, c...)
	}
	t := make([]byte, im.tail)
	if !im.tailZero {
		t = randomData(seed+99, im.tail)
	}
	return append(b, t...)
}

// dataBytes is what the image holds outside zero chunks.
func (im sparseImg) dataBytes() int64 {
	var n int64
	for _, z := range im.zero {
		if !z {
			n += testChunk
		}
	}
	if !im.tailZero {
		n += int64(im.tail)
	}
	return n
}

// zeroRuns is the zero runs inside the data chunks.
func (im sparseImg) zeroRuns() int64 {
	var n int64
	for _, z := range im.zero {
		if !z {
			n += testChunk / 8
		}
	}
	return n
}

var sparseImgs = map[string]sparseImg{
	// holes at the start, in the middle and at the end (a zero tail)
	"holes.img": {zero: []bool{true, true, false, false, true, false, true, true}, tail: 10000, tailZero: true},
	// a hole before a data tail
	"tail.img":  {zero: []bool{true, false, true, true, false}, tail: 5000},
	"zeros.img": {zero: []bool{true, true, true, true, true}, tail: 3000, tailZero: true},
	"full.img":  {zero: []bool{false, false, false}, tail: 777},
}

// sparseStore backs the sparse images up in a group of their own of the
// fixture's store.
func sparseStore(t *testing.T) (*store.Store, map[string][]byte) {
	s := testFixture(t).s
	f := &fixture{s: s, tmp: t.TempDir(), files: map[string][]byte{}, links: map[string]string{}}
	sp := snapSpec{g: newGroup("sparse"), at: t0, images: map[string][]byte{}}
	for name, im := range sparseImgs {
		sp.images[name] = im.data(uint64(len(name)))
	}
	snap, err := f.backup(sp)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for name, data := range sp.images {
		out[snap.String()+"/"+name] = data
	}
	return s, out
}

// sparseCopy writes data to path leaving its zero chunks as holes, as
// `cairn restore` does.
func sparseCopy(t *testing.T, path string, data []byte) {
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zero := make([]byte, testChunk)
	for off := 0; off < len(data); off += testChunk {
		c := data[off:min(off+testChunk, len(data))]
		if !bytes.Equal(c, zero[:len(c)]) {
			if _, err := fh.WriteAt(c, int64(off)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := fh.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

// seeks is lseek(off, whence) at every chunk boundary, next to it,
// inside each chunk and at the end.
func seeks(t *testing.T, path string, size int64) string {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var b bytes.Buffer
	for at := int64(0); at <= size+testChunk; at += testChunk {
		for _, off := range []int64{at - 1, at, at + 1, at + testChunk/2, size - 1, size, size + 1} {
			if off < 0 {
				continue
			}
			for _, whence := range []int{unix.SEEK_DATA, unix.SEEK_HOLE} {
				got, err := unix.Seek(int(fh.Fd()), off, whence)
				fmt.Fprintf(&b, "%d/%d: %d %v\n", off, whence, got, err)
			}
		}
	}
	return b.String()
}

func blocksOf(t *testing.T, path string) int64 {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks
}

// TestSparseImages: an image's zero chunks are holes through the mount.
// SEEK_DATA and SEEK_HOLE answer at every chunk boundary and inside
// chunks as on a tmpfs file written with the same holes; st_blocks is
// the data's; cp --sparse=auto copies the image as a sparse file of the
// same bytes, and tar -S archives little more than the data; an image of
// zeros and one without holes too.
func TestSparseImages(t *testing.T) {
	s, files := sparseStore(t)
	shm := t.TempDir()
	if d, err := os.MkdirTemp("/dev/shm", "cairn-sparse-"); err == nil {
		shm = d
		t.Cleanup(func() { os.RemoveAll(d) })
	}
	forModes(t, func(t *testing.T, one bool) {
		_, mnt, _ := mountT(t, Options{Store: s, OneMount: one})
		for rel, data := range files {
			name := filepath.Base(rel)
			im := sparseImgs[name]
			t.Run(name, func(t *testing.T) {
				p := filepath.Join(mnt, rel)
				if got, want := blocksOf(t, p), (im.dataBytes()+511)/512; got != want {
					t.Errorf("st_blocks %d, want %d", got, want)
				}
				ref := filepath.Join(shm, name)
				sparseCopy(t, ref, data)
				if got, want := seeks(t, p, int64(len(data))), seeks(t, ref, int64(len(data))); got != want {
					t.Errorf("lseek through the mount:\n%s\non tmpfs:\n%s", got, want)
				}
				cp := filepath.Join(shm, "cp-"+name)
				if out, err := exec.Command("cp", "--sparse=auto", p, cp).CombinedOutput(); err != nil {
					t.Fatalf("cp: %v: %s", err, out)
				}
				if got, err := os.ReadFile(cp); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("cp's copy differs (%v)", err)
				}
				// cp also leaves holes for the zero runs inside data chunks.
				if got, max, min := blocksOf(t, cp), blocksOf(t, ref), (im.dataBytes()-im.zeroRuns())/512; got > max || got < min {
					t.Errorf("cp's copy has %d blocks, the sparse file %d, its data without zero runs %d", got, max, min)
				}
				tarball := filepath.Join(shm, name+".tar")
				if out, err := exec.Command("tar", "-S", "-cf", tarball, "-C", filepath.Dir(p), name).CombinedOutput(); err != nil {
					t.Fatalf("tar: %v: %s", err, out)
				}
				if st, err := os.Stat(tarball); err != nil || st.Size() > im.dataBytes()+16<<10 {
					t.Errorf("tar -S archive of %d bytes of data: %d bytes (%v)", im.dataBytes(), st.Size(), err)
				}
			})
		}
	})
}

// TestHoleMapSeek checks the map's answers past the end and to a bad
// whence, which the kernel never sends.
func TestHoleMapSeek(t *testing.T) {
	h := &holeMap{size: 3*testChunk + 5, chunkSize: testChunk, zero: []uint64{0b1010}}
	for _, c := range []struct {
		off    uint64
		whence uint32
		want   uint64
		err    error
	}{
		{0, seekData, 0, nil}, {0, seekHole, testChunk, nil}, {testChunk + 3, seekData, 2 * testChunk, nil},
		{2*testChunk + 1, seekHole, 3 * testChunk, nil}, {3 * testChunk, seekData, 0, unix.ENXIO},
		{3 * testChunk, seekHole, 3 * testChunk, nil}, {3*testChunk + 5, seekHole, 0, unix.ENXIO},
		{0, 0, 0, unix.EINVAL},
	} {
		got, e := h.seek(c.off, c.whence)
		if got != c.want || (c.err == nil) != (e == 0) || (c.err != nil && e != c.err) {
			t.Errorf("seek(%d, %d) = %d, %v; want %d, %v", c.off, c.whence, got, e, c.want, c.err)
		}
	}
}

// TestSparseBlocksFromIndex: the first mount that stats an image learns
// its bytes of data from the index and keeps them in the snapshot
// index; the next mount lists and stats it with the same st_blocks
// without opening the manifest or the index, and lseek still reads the
// image's index.
func TestSparseBlocksFromIndex(t *testing.T) {
	needFUSE(t)
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	im := sparseImgs["holes.img"]
	f := &fixture{s: s, tmp: t.TempDir(), files: map[string][]byte{}, links: map[string]string{}}
	snap, err := f.backup(snapSpec{g: newGroup("sparse-idx"), at: t0, images: map[string][]byte{"holes.img": im.data(1)}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // the index keeps settled manifests only (store.snapIndexSettle)
	watch := watchOpens(t, s.SnapshotPath(snap))
	counted := mountCounting(t, s, watch)
	want := (im.dataBytes() + 511) / 512
	stat := func(mnt string) {
		if got := blocksOf(t, filepath.Join(mnt, snap.String(), "holes.img")); got != want {
			t.Errorf("st_blocks %d, want %d", got, want)
		}
	}
	if first := counted("first", stat); !slices.Contains(first, store.ManifestName) || !slices.Contains(first, "holes.img.fidx") {
		t.Fatalf("first mount opened %v: want the manifest and the index", first)
	}
	if second := counted("second", stat); len(second) != 0 {
		t.Fatalf("stat-ing from the snapshot index opened %v", second)
	}
	seek := counted("seek", func(mnt string) {
		stat(mnt)
		fh, err := os.Open(filepath.Join(mnt, snap.String(), "holes.img"))
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if off, err := unix.Seek(int(fh.Fd()), 0, unix.SEEK_DATA); off != 2*testChunk || err != nil {
			t.Errorf("SEEK_DATA at 0: %d, %v", off, err)
		}
	})
	if !slices.Contains(seek, "holes.img.fidx") {
		t.Fatalf("lseek opened %v: want the index", seek)
	}
}

// TestSparseEncrypted: an encrypted image names its zero chunks by the
// keyed digest of zeros; they are holes too.
func TestSparseEncrypted(t *testing.T) {
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	key, err := crypt.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s.SetKeys(store.NewKeys(key))
	im := sparseImgs["tail.img"]
	data := im.data(5)
	ctx := context.Background()
	b, err := s.StartBackup(ctx, newGroup("sparse-enc"), t0)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	f := &fixture{s: s, tmp: t.TempDir()}
	if err := b.Encrypt(key); err != nil {
		t.Fatal(err)
	}
	if err := f.addImage(ctx, b, "tail.img", data); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	_, mnt, _ := mountT(t, Options{Store: s})
	p := filepath.Join(mnt, b.Snapshot().String(), "tail.img")
	if got, want := blocksOf(t, p), (im.dataBytes()+511)/512; got != want {
		t.Errorf("st_blocks %d, want %d", got, want)
	}
	ref := filepath.Join(t.TempDir(), "tail.img")
	sparseCopy(t, ref, data)
	if got, want := seeks(t, p, int64(len(data))), seeks(t, ref, int64(len(data))); got != want {
		t.Errorf("lseek through the mount:\n%s\nof a sparse file:\n%s", got, want)
	}
}
