package gc

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// A store with plain and encrypted groups side by side: GC keeps every
// chunk a snapshot references, plain or encrypted, and removes the
// encrypted chunks no snapshot references any more.
func TestRunMixedEncrypted(t *testing.T) {
	s := storetest.NewStore(t)
	k := crypttest.NewKey(t)
	encG := store.Group{Type: store.TypeVM, ID: "enc"}
	plain := backup(t, s, vm, 0, storetest.RandBytes("plain", 8*testChunk))
	old := crypttest.Backup(t, s, encG, t0, crypttest.Image{Data: crypttest.Data("old"), Blobs: map[string][]byte{"conf.blob": []byte("a")}}, k)
	data := slices.Clone(crypttest.Data("old"))
	copy(data[:2*testChunk], storetest.RandBytes("new", 2*testChunk))
	cur := crypttest.Backup(t, s, encG, t0.Add(time.Hour), crypttest.Image{Data: data}, k)

	keep := digests(t, s, plain)
	encKeep := digests(t, s, cur)
	for d := range encKeep {
		keep[d] = true
	}
	onlyOld := digests(t, s, old)
	for d := range encKeep {
		delete(onlyOld, d)
	}
	if len(onlyOld) != 2 {
		t.Fatalf("test data: %d chunks only in the old encrypted snapshot, want 2", len(onlyOld))
	}
	if err := s.ForgetSnapshot(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	ageChunks(t, s, 72*time.Hour, false)
	run(t, s, DefaultAtimeCutoff)

	checkChunks(t, s, keep)
	for d := range onlyOld {
		if storetest.HasChunk(t, s, d) {
			t.Errorf("unreferenced encrypted chunk %s stayed", d)
		}
	}
	kinds := crypttest.Kinds(crypttest.Chunks(t, s, cur, "disk.img.fidx"))
	if kinds[chunk.KindEncrypted]+kinds[chunk.KindEncryptedZstd] != len(encKeep) {
		t.Fatalf("kept encrypted snapshot: chunk kinds %v", kinds)
	}
	got, err := crypttest.ReadImage(t, crypttest.KeyedView(t, s, k), cur, "disk.img.fidx")
	if err != nil || string(got) != string(data) {
		t.Fatalf("encrypted snapshot after GC: %v, equal %v", err, string(got) == string(data))
	}
}
