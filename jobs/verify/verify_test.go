package verify

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if off < 0 {
		fi, _ := f.Stat()
		off += fi.Size()
	}
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyFindsDamage(t *testing.T) {
	s := testStore(t)
	g := func(id string) store.Group { return store.Group{NS: "damage", Type: store.TypeHost, ID: id} }
	const n = 8 * testChunk
	a1data := randBytes("a", n)
	a2data := slices.Concat(a1data[:7*testChunk], randBytes("a2", testChunk))
	a1 := backupImage(t, s, g("a"), t0, a1data)
	a2 := backupImage(t, s, g("a"), t0.Add(time.Hour), a2data)
	b1 := backupImage(t, s, g("b"), t0, randBytes("b", n))
	c1 := backupImage(t, s, g("c"), t0, randBytes("c", n))
	d1 := backupImage(t, s, g("d"), t0, randBytes("d", n))
	e1 := backupImage(t, s, g("e"), t0, randBytes("e", n))
	g1 := backupImage(t, s, g("g"), t0, compressible("g", n)) // zstd blobs
	z1 := backupImage(t, s, g("z"), t0, compressible("z", n))
	h1 := backupImage(t, s, g("h"), t0, randBytes("h", n))

	flipped := chunksOf(t, s, a1, "disk.img.fidx")[2] // shared by a1 and a2
	flipByte(t, s.ChunkPath(flipped), chunk.BlobHeaderSize+100)
	truncated := chunksOf(t, s, b1, "disk.img.fidx")[3]
	if err := os.Truncate(s.ChunkPath(truncated), testChunk/2); err != nil {
		t.Fatal(err)
	}
	deleted := chunksOf(t, s, c1, "disk.img.fidx")[1]
	if err := os.Remove(s.ChunkPath(deleted)); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(s.SnapshotPath(d1), "disk.img.fidx"), 4096+5)
	flipByte(t, filepath.Join(s.SnapshotPath(e1), store.ManifestName), -1)
	wrong := chunksOf(t, s, h1, "disk.img.fidx")[0] // a valid blob of other data
	other, _ := chunk.EncodeBlob(nil, randBytes("not h", testChunk), true)
	if err := os.WriteFile(s.ChunkPath(wrong), other, 0o644); err != nil {
		t.Fatal(err)
	}

	zwrong := chunksOf(t, s, z1, "disk.img.fidx")[5] // a valid zstd blob of other data
	zother, _ := chunk.EncodeBlob(nil, compressible("not z", testChunk), true)
	if zother[0] != chunk.MagicZstd[0] {
		t.Fatal("test data does not compress")
	}
	if err := os.WriteFile(s.ChunkPath(zwrong), zother, 0o644); err != nil {
		t.Fatal(err)
	}

	st, rep, j := runVerify(t, s, map[string]string{"ns": "damage", "chunk-order": "inode", "read-threads": "2", "verify-threads": "3"})
	if st.State != jobs.StateFailed {
		t.Fatalf("state %s, want failed", st.State)
	}
	if rep.SnapshotsOK != 1 || rep.SnapshotsFailed != 8 || rep.ChunksCorrupt != 5 || rep.ChunkOrder != jobs.OrderInode {
		t.Fatalf("report: ok %d failed %d corrupt %d order %s", rep.SnapshotsOK, rep.SnapshotsFailed, rep.ChunksCorrupt, rep.ChunkOrder)
	}
	// Each damage is found and reported with the right snapshot.
	wantErr := map[store.Snapshot]string{
		a1: flipped.String(), a2: flipped.String(), b1: truncated.String(), c1: deleted.String(),
		d1: "index disk.img.fidx", e1: "manifest", h1: "digest mismatch", z1: zwrong.String(),
	}
	for snap, want := range wantErr {
		r, ok := resultOf(rep, snap)
		if !ok || r.State != SnapFailed || !strings.Contains(strings.Join(r.Errors, "\n"), want) {
			t.Errorf("%s: %+v, want failed with %q", snap, r, want)
		}
	}
	for _, snap := range []store.Snapshot{d1, e1} {
		if r, _ := resultOf(rep, snap); !r.Damaged {
			t.Errorf("%s not marked damaged", snap)
		}
	}
	if r, ok := resultOf(rep, g1); !ok || r.State != SnapOK || len(r.Errors) != 0 {
		t.Errorf("intact snapshot: %+v", r)
	}
	// Corrupt chunks: reason, where they went, which snapshots they hurt.
	wantCorrupt := map[chunk.Digest]struct {
		reason string
		snaps  []store.Snapshot
		moved  bool
	}{
		flipped:   {"CRC", []store.Snapshot{a2, a1}, true},
		truncated: {"CRC", []store.Snapshot{b1}, true},
		deleted:   {"missing", []store.Snapshot{c1}, false},
		wrong:     {"digest mismatch", []store.Snapshot{h1}, true},
		zwrong:    {"digest mismatch", []store.Snapshot{z1}, true},
	}
	for _, c := range rep.Corrupt {
		d, _ := chunk.ParseDigest(c.Digest)
		w, ok := wantCorrupt[d]
		if !ok {
			t.Errorf("unexpected corrupt chunk %+v", c)
			continue
		}
		var snaps []string
		for _, sn := range w.snaps {
			snaps = append(snaps, sn.String())
		}
		if !strings.Contains(c.Reason, w.reason) || !slices.Equal(c.Snapshots, snaps) {
			t.Errorf("chunk %s: %+v, want reason %q snapshots %v", d, c, w.reason, snaps)
		}
		if w.moved != (c.BadPath == s.ChunkPath(d)+".0.bad") || w.moved != exists(s.ChunkPath(d)+".0.bad") {
			t.Errorf("chunk %s: bad path %q, exists %v, want moved %v", d, c.BadPath, exists(c.BadPath), w.moved)
		}
		if exists(s.ChunkPath(d)) {
			t.Errorf("chunk %s still in place", d)
		}
	}
	// Manifests: failed with the job id, the intact one ok.
	for _, snap := range []store.Snapshot{a1, a2, b1, c1, d1, h1, z1} {
		if vs, ok := verifyState(t, s, snap); !ok || vs.State != "failed" || vs.UPID != j.ID() {
			t.Errorf("%s: verify_state %+v", snap, vs)
		}
	}
	if vs, ok := verifyState(t, s, g1); !ok || vs.State != "ok" || vs.UPID != j.ID() {
		t.Errorf("%s: verify_state %+v", g1, vs)
	}
	// The missing chunk's stat failed, was reported and sorted last.
	if !strings.Contains(strings.Join(j.Log(), "\n"), "sorted last") {
		t.Errorf("no stat failure in the log:\n%s", strings.Join(j.Log(), "\n"))
	}
	next := strings.Join(rep.Next, "\n")
	for _, want := range []string{"ns/damage/host/a", "ns/damage/host/c", "new backup", d1.String()} {
		if !strings.Contains(next, want) {
			t.Errorf("next steps do not mention %q:\n%s", want, next)
		}
	}

	// A new backup heals: a2 failed, so it is not the dedup base and the
	// lost chunk is uploaded again; then all of host/a verifies ok.
	a3 := backupImage(t, s, g("a"), t0.Add(2*time.Hour), a1data)
	refs := strings.Join([]string{"host/a/" + a1.TimeString(), "host/a/" + a2.TimeString(), "host/a/latest"}, ",")
	st, rep, _ = runVerify(t, s, map[string]string{"ns": "damage", "snapshots": refs})
	if st.State != jobs.StateOK || rep.SnapshotsOK != 3 || rep.SnapshotsFailed != 0 {
		t.Fatalf("after healing backup %s: state %s, report %+v", a3, st.State, rep)
	}
}

func TestVerifyDynamicEncryptedAndBlobs(t *testing.T) {
	s := testStore(t)
	ctx := t.Context()
	fp := newKey(t).Fingerprint()
	build := func(id string, sizeSkew int, conf []byte) store.Snapshot {
		g := store.Group{NS: "dyn", Type: store.TypeCT, ID: id}
		b, err := s.StartBackup(ctx, g, t0)
		if err != nil {
			t.Fatal(err)
		}
		b.Sync = store.SyncNone
		w, err := index.NewDynamicWriter(filepath.Join(b.Dir(), "root.pxar.didx"))
		if err != nil {
			t.Fatal(err)
		}
		data := randBytes("dyn "+id, 300_000)
		for off, i := 0, 0; off < len(data); i++ {
			n := min(len(data)-off, 20_000+i*7_919)
			part := data[off : off+n]
			blob, _ := chunk.EncodeBlob(nil, part, true)
			d := chunk.Sum(part)
			if _, err := s.InsertChunk(d, blob); err != nil {
				t.Fatal(err)
			}
			skew := 0
			if i == 2 {
				skew = sizeSkew
			}
			w.Add(d, n+skew)
			off += n
		}
		csum, size, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		b.AddFile(store.FileInfo{Filename: "root.pxar.didx", Size: uint64(size), Csum: store.CsumHex(csum)})
		// An encrypted image whose key is not given: its chunk can only
		// be checked by CRC and ciphertext size (900 bytes, stored as is).
		fw, err := index.NewFixedWriter(filepath.Join(b.Dir(), "secret.img.fidx"), testChunk)
		if err != nil {
			t.Fatal(err)
		}
		enc := slices.Concat(chunk.MagicEncrypted[:], make([]byte, 4), randBytes("enc "+id, chunk.EncryptedHeaderSize-chunk.BlobHeaderSize+900))
		putCRC(enc)
		ed := chunk.Sum(randBytes("enc key "+id, 8))
		if _, err := s.InsertChunk(ed, enc); err != nil {
			t.Fatal(err)
		}
		fw.Add(ed, 900)
		csum, size, err = fw.Close()
		if err != nil {
			t.Fatal(err)
		}
		b.AddFile(store.FileInfo{Filename: "secret.img.fidx", CryptMode: "encrypt", Size: uint64(size), Csum: store.CsumHex(csum)})
		confBlob, _ := chunk.EncodeBlob(nil, conf, true)
		if err := b.AddBlob("qemu.conf.blob", confBlob); err != nil {
			t.Fatal(err)
		}
		if err := b.Finish(); err != nil {
			t.Fatal(err)
		}
		// the manifest names the key it is encrypted with
		err = s.UpdateManifest(ctx, b.Snapshot(), func(m *store.Manifest) error {
			m.Unprotected["key-fingerprint"], err = json.Marshal(fp.String())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.Snapshot()
	}
	good := build("good", 0, []byte("cores: 2\n"))
	bad := build("bad", 1, []byte("cores: 4\n"))
	flipByte(t, filepath.Join(s.SnapshotPath(bad), "qemu.conf.blob"), -1)

	st, rep, _ := runVerify(t, s, map[string]string{"ns": "dyn"})
	if st.State != jobs.StateFailed || rep.SnapshotsOK != 1 || rep.SnapshotsFailed != 1 {
		t.Fatalf("state %s, report %+v", st.State, rep)
	}
	if r, _ := resultOf(rep, good); r.State != SnapOK || !strings.Contains(r.Encryption, "not given") {
		t.Errorf("good snapshot: %+v", r)
	}
	if rep.ChunksWithoutKey != 2 {
		t.Errorf("%d chunks checked without key, want 2", rep.ChunksWithoutKey)
	}
	r, _ := resultOf(rep, bad)
	errs := strings.Join(r.Errors, "\n")
	// The skewed size is the index's fault: the chunk is good and stays.
	if r.State != SnapFailed || r.BadChunks != 0 || !r.Damaged || !strings.Contains(errs, "the index says") ||
		!strings.Contains(errs, "stays in place") || !strings.Contains(errs, "blob qemu.conf.blob: SHA-256") {
		t.Errorf("bad snapshot: %+v", r)
	}
	if rep.ChunksCorrupt != 0 || len(rep.Corrupt) != 0 {
		t.Errorf("a good chunk was condemned: %+v", rep.Corrupt)
	}
}

// putCRC sets a hand-made blob's CRC field (over the ciphertext only for
// an encrypted blob, as PBS computes it).
func putCRC(blob []byte) {
	start := chunk.BlobHeaderSize
	if k, _ := chunk.BlobKind(blob); k.Encrypted() {
		start = chunk.EncryptedHeaderSize
	}
	sum := crc32IEEE(blob[start:])
	blob[8], blob[9], blob[10], blob[11] = byte(sum), byte(sum>>8), byte(sum>>16), byte(sum>>24)
}
