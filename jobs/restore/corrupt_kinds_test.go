package restore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestDamagedChunkEveryKind: the two paths that read a chunk's data
// without its blob's CRC (chunk.DecodeChunkData) — the chunk cache, which
// the mount, cat and file restores read through, and an image restore —
// still refuse a chunk of each kind (plain, zstd, encrypted,
// encrypted+zstd) with a flipped byte in its payload, naming the chunk
// and giving none of its data. A flip in the CRC field alone leaves the
// data intact: both read it, and the blob still fails the CRC check
// verify makes.
func TestDamagedChunkEveryKind(t *testing.T) {
	k := crypttest.NewKey(t)
	for _, key := range []*crypt.Key{nil, k} {
		s := storetest.NewStore(t)
		img := crypttest.Data("kinds")
		snap := crypttest.Backup(t, s, cryptGroup, time.Unix(1700000000, 0), crypttest.Image{Data: img}, key)
		view := s
		if key != nil {
			view = crypttest.KeyedView(t, s, key)
		}
		x, err := openImage(t, view, snap)
		if err != nil {
			t.Fatal(err)
		}
		kinds := crypttest.Chunks(t, s, snap, "disk.img.fidx")
		seen := map[chunk.Kind]bool{}
		for i := range x.Len() {
			d, start, _ := x.Chunk(i)
			kind := kinds[d]
			if seen[kind] {
				continue
			}
			seen[kind] = true
			t.Run(kind.String(), func(t *testing.T) {
				orig, err := os.ReadFile(s.ChunkPath(d))
				if err != nil {
					t.Fatal(err)
				}
				defer os.WriteFile(s.ChunkPath(d), orig, 0o644)
				for _, off := range []int{len(orig) / 2, len(orig) - 1} {
					crypttest.RewriteChunk(t, s, d, false, func(b []byte) { copy(b, orig); b[off] ^= 0x10 })
					checkDamaged(t, s, view, snap, x, d, start, img)
				}
				crypttest.RewriteChunk(t, s, d, false, func(b []byte) { copy(b, orig); b[9] ^= 0x10 })
				if got, err := crypttest.ReadImage(t, view, snap, "disk.img.fidx"); err != nil || !bytes.Equal(got, img) {
					t.Fatalf("CRC field flipped: read through the cache: %v", err)
				}
				var out bytes.Buffer
				if _, err := Image(context.Background(), x, s, Target{Stream: &out}, Options{Threads: 2}); err != nil || !bytes.Equal(out.Bytes(), img) {
					t.Fatalf("CRC field flipped: restore: %v", err)
				}
				blob, _ := os.ReadFile(s.ChunkPath(d))
				if _, err := chunk.CheckCRC(blob); !errors.Is(err, chunk.ErrBadCRC) {
					t.Fatalf("CRC field flipped: CheckCRC (verify's) %v, want ErrBadCRC", err)
				}
			})
		}
		if len(seen) != 2 { // plain and zstd, or encrypted and encrypted+zstd
			t.Fatalf("chunk kinds %v, want 2", seen)
		}
	}
}

// checkDamaged reads snap's image through the chunk cache (of view,
// which holds the key) and restores it from s: both fail naming chunk d
// (at archive offset start), and neither hands out data of it.
func checkDamaged(t *testing.T, s, view *store.Store, snap store.Snapshot, x index.Index, d chunk.Digest, start int64, img []byte) {
	t.Helper()
	got, err := crypttest.ReadImage(t, view, snap, "disk.img.fidx")
	var re *chunkcache.ReadError
	if !errors.Is(err, store.ErrCorruptChunk) || !errors.As(err, &re) || re.Digest != d.String() {
		t.Fatalf("read through the cache: %v, want ErrCorruptChunk naming %s", err, d)
	}
	if int64(len(got)) > start || !bytes.Equal(got, img[:len(got)]) {
		t.Fatalf("read through the cache: %d bytes handed out, the damaged chunk starts at %d", len(got), start)
	}
	var out bytes.Buffer
	_, err = Image(context.Background(), x, s, Target{Stream: &out}, Options{Threads: 2})
	if err == nil || !strings.Contains(err.Error(), d.String()) {
		t.Fatalf("restore: %v, want an error naming chunk %s", err, d)
	}
	if int64(out.Len()) > start || !bytes.Equal(out.Bytes(), img[:out.Len()]) {
		t.Fatalf("restore: %d bytes written, the damaged chunk starts at %d", out.Len(), start)
	}
}
