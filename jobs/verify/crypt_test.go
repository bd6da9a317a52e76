package verify

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/internal/crypttest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/storetest"
)

// An encrypted snapshot verifies ok without its key (CRC, structure and
// sizes, as PBS) and with it (decrypted, keyed digests, signature); the
// report says which, and never holds the key.
func TestVerifyEncrypted(t *testing.T) {
	s := testStore(t)
	g := func(id string) store.Group { return store.Group{NS: "crypt-ok", Type: store.TypeVM, ID: id} }
	k := newKey(t)
	enc := backupEncrypted(t, s, g("enc"), t0, crypttest.Data("enc"), k)
	plain := backupImage(t, s, g("plain"), t0, randBytes("plain", 4*testChunk))
	chunks := encryptedChunks(t, s, enc)
	kinds := crypttest.Kinds(chunks)
	if kinds[chunk.KindEncrypted] == 0 || kinds[chunk.KindEncryptedZstd] == 0 {
		t.Fatalf("test data: chunk kinds %v, want both encrypted kinds", kinds)
	}
	params := map[string]string{"ns": "crypt-ok"}

	st, rep, j := runVerify(t, s, params)
	if st.State != jobs.StateOK || rep.SnapshotsOK != 2 {
		t.Fatalf("without key: state %s, report %+v", st.State, rep)
	}
	if rep.ChunksWithoutKey != int64(len(chunks)) || rep.ChunksDecrypted != 0 {
		t.Errorf("without key: %d chunks checked without key, %d decrypted; want %d and 0",
			rep.ChunksWithoutKey, rep.ChunksDecrypted, len(chunks))
	}
	r := snapResult(t, rep, enc)
	if !strings.Contains(r.Encryption, "not given") || !strings.Contains(r.Encryption, k.Fingerprint().Short()) {
		t.Errorf("without key: encryption note %q", r.Encryption)
	}
	if next := strings.Join(rep.Next, "\n"); !r.WithoutKey || !strings.Contains(next, "--keyfile") || !strings.Contains(next, enc.String()) {
		t.Errorf("without key: next steps %q", next)
	}
	if r := snapResult(t, rep, plain); r.Encryption != "" || r.WithoutKey {
		t.Errorf("plain snapshot: encryption note %q", r.Encryption)
	}
	if vs, _ := verifyState(t, s, enc); vs.State != SnapOK {
		t.Errorf("without key: verify state %+v", vs)
	}

	ks := keyedView(t, s, k)
	st2, rep2, j2 := runVerify(t, ks, params)
	if st2.State != jobs.StateOK || rep2.SnapshotsOK != 2 {
		t.Fatalf("with key: state %s, report %+v", st2.State, rep2)
	}
	if rep2.ChunksDecrypted != int64(len(chunks)) || rep2.ChunksWithoutKey != 0 {
		t.Errorf("with key: %d chunks decrypted, %d without key; want %d and 0",
			rep2.ChunksDecrypted, rep2.ChunksWithoutKey, len(chunks))
	}
	if r := snapResult(t, rep2, enc); !strings.Contains(r.Encryption, "decrypted with key "+k.Fingerprint().Short()) {
		t.Errorf("with key: encryption note %q", r.Encryption)
	}
	if vs, _ := verifyState(t, s, enc); vs.State != SnapOK || vs.UPID != j2.ID() {
		t.Errorf("with key: verify state %+v", vs)
	}
	checkNoKey(t, st, j, k)
	checkNoKey(t, st2, j2, k)
}

// Damage to encrypted chunks and manifests: what the CRC covers (the
// ciphertext) is found with or without the key; a forged ciphertext with
// a fixed CRC, or a changed tag, only with it (ErrAuth); a tampered
// signature fails the snapshot with the key, naming the manifest.
func TestVerifyEncryptedDamage(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		name := map[bool]string{false: "without-key", true: "with-key"}[withKey]
		t.Run(name, func(t *testing.T) {
			ns := "crypt-damage-" + name
			s := testStore(t)
			k := newKey(t)
			snap := func(id string) store.Snapshot {
				g := store.Group{NS: store.NS(ns), Type: store.TypeVM, ID: id}
				return backupEncrypted(t, s, g, t0, crypttest.Data(ns+id), k)
			}
			crc, forged, tag, sig, good := snap("crc"), snap("forged"), snap("tag"), snap("sig"), snap("good")
			first := func(sn store.Snapshot) chunk.Digest { return chunksOf(t, s, sn, "disk.img.fidx")[0] }
			crypttest.RewriteChunk(t, s, first(crc), false, func(b []byte) { b[chunk.EncryptedHeaderSize+10] ^= 1 })
			crypttest.RewriteChunk(t, s, first(forged), true, func(b []byte) { b[chunk.EncryptedHeaderSize+10] ^= 1 })
			crypttest.RewriteChunk(t, s, first(tag), false, func(b []byte) { b[chunk.BlobHeaderSize+crypt.IVSize+3] ^= 1 })
			err := s.UpdateManifest(context.Background(), sig, func(m *store.Manifest) error {
				other := hex.EncodeToString(make([]byte, 32))
				m.Signature = &other
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			vs := s
			if withKey {
				vs = keyedView(t, s, k)
			}
			st, rep, j := runVerify(t, vs, map[string]string{"ns": ns})
			if st.State != jobs.StateFailed {
				t.Fatalf("state %s", st.State)
			}
			want := map[store.Snapshot]string{crc: chunk.ErrBadCRC.Error()}
			ok := []store.Snapshot{good}
			if withKey {
				want[forged] = crypt.ErrAuth.Error()
				want[tag] = crypt.ErrAuth.Error()
				want[sig] = store.ManifestName
			} else { // as PBS: what the CRC does not cover needs the key
				ok = append(ok, forged, tag, sig)
			}
			for sn, msg := range want {
				r := snapResult(t, rep, sn)
				if errs := strings.Join(r.Errors, "\n"); r.State != SnapFailed || !strings.Contains(errs, msg) {
					t.Errorf("%s: %s %q, want failed with %q", sn.Group.ID, r.State, errs, msg)
				}
			}
			if withKey {
				r := snapResult(t, rep, sig)
				if errs := strings.Join(r.Errors, "\n"); !strings.Contains(errs, "signature") || !r.Damaged {
					t.Errorf("tampered signature: %q damaged=%v", errs, r.Damaged)
				}
			}
			for _, sn := range ok {
				if r := snapResult(t, rep, sn); r.State != SnapOK {
					t.Errorf("%s: %s %q, want ok", sn.Group.ID, r.State, r.Errors)
				}
			}
			if rep.ChunksCorrupt != len(want)-btoi(withKey) { // the signature fails no chunk
				t.Errorf("%d corrupt chunks, want %d: %+v", rep.ChunksCorrupt, len(want)-btoi(withKey), rep.Corrupt)
			}
			for _, c := range rep.Corrupt {
				if c.BadPath == "" || !exists(c.BadPath) {
					t.Errorf("corrupt chunk %s not moved aside: %+v", c.Digest, c)
				}
			}
			checkNoKey(t, st, j, k)
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// forgeIndexOf makes snapshot dst (of key dk) list src's image chunks:
// its index is replaced by src's, its manifest says so and is signed
// again with dk, as someone holding dk could.
func forgeIndexOf(t testing.TB, s *store.Store, src, dst store.Snapshot, dk *crypt.Key) {
	t.Helper()
	ms, err := s.ReadManifest(src)
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := ms.File("disk.img.fidx")
	data, err := os.ReadFile(filepath.Join(s.SnapshotPath(src), fi.Filename))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.SnapshotPath(dst), fi.Filename), data, 0o644); err != nil {
		t.Fatal(err)
	}
	md, err := s.ReadManifest(dst)
	if err != nil {
		t.Fatal(err)
	}
	md.Files = []store.FileInfo{fi} // without the blob, which needs the other key
	md.Signature = nil
	js, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := dk.ManifestSignature(js)
	if err != nil {
		t.Fatal(err)
	}
	sig := hex.EncodeToString(sum[:])
	md.Signature = &sig
	if err := s.WriteManifest(dst, md); err != nil {
		t.Fatal(err)
	}
}

// Chunk checks with different keys never stand for each other: a chunk
// checked without a key for one snapshot is decrypted for another that
// has its key; a snapshot whose index lists chunks of another key fails,
// and the chunks, good for their own snapshot, stay.
func TestVerifyKeysDoNotMix(t *testing.T) {
	s := testStore(t)
	const ns = "crypt-mix"
	g := func(id string) store.Group { return store.Group{NS: ns, Type: store.TypeVM, ID: id} }
	k1, k3 := newKey(t), newKey(t)
	e1 := backupEncrypted(t, s, g("b-own"), t0, crypttest.Data("mix"), k1)
	e1b := backupEncrypted(t, s, g("c-same-key"), t0, crypttest.Data("mix"), k1) // the same chunks
	forged := backupEncrypted(t, s, g("a-forged"), t0, crypttest.Data("forged"), k3)
	forgeIndexOf(t, s, e1, forged, k3)
	n := int64(len(encryptedChunks(t, s, e1)))
	params := map[string]string{"ns": ns}

	// k3 not given: the forged snapshot's chunks (e1's) are checked
	// without a key, and decrypted once more for e1 and e1b
	st, rep, _ := runVerify(t, keyedView(t, s, k1), params)
	if st.State != jobs.StateOK || rep.SnapshotsOK != 3 {
		t.Fatalf("k1 only: state %s, report %+v", st.State, rep.Snapshots)
	}
	if rep.ChunksDecrypted != n || rep.ChunksWithoutKey != n {
		t.Errorf("k1 only: %d decrypted, %d without key; want %d each", rep.ChunksDecrypted, rep.ChunksWithoutKey, n)
	}

	// both keys: the forged snapshot's index names chunks of k1
	st, rep, _ = runVerify(t, keyedView(t, s, k1, k3), params)
	if st.State != jobs.StateFailed || rep.SnapshotsOK != 2 || rep.SnapshotsFailed != 1 || rep.ChunksCorrupt != 0 {
		t.Fatalf("both keys: state %s, report %+v", st.State, rep)
	}
	if rep.ChunksDecrypted != n { // a-forged goes first: its failures find k1, which e1 and e1b then reuse
		t.Errorf("both keys: %d chunks decrypted, want %d", rep.ChunksDecrypted, n)
	}
	r := snapResult(t, rep, forged)
	if errs := strings.Join(r.Errors, "\n"); r.State != SnapFailed || !strings.Contains(errs, "but with key "+k1.Fingerprint().Short()) {
		t.Errorf("forged: %s %q", r.State, errs)
	}
	for _, sn := range []store.Snapshot{e1, e1b} {
		if r := snapResult(t, rep, sn); r.State != SnapOK {
			t.Errorf("%s: %s %q", sn, r.State, r.Errors)
		}
	}
	for _, d := range chunksOf(t, s, e1, "disk.img.fidx") {
		if !storetest.HasChunk(t, s, d) {
			t.Errorf("chunk %s of %s was moved aside", d, e1)
		}
	}
}

// Without the key, an encrypted chunk's ciphertext must fit the plain
// size the index gives it: as many bytes when stored uncompressed. A
// chunk replaced by another encrypted blob of another size fails its
// snapshot without the key (and stays: the chunk may be right and the
// index wrong); with the key its keyed digest condemns it.
func TestVerifyEncryptedSize(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		s := testStore(t)
		ns := "crypt-size-" + strconv.FormatBool(withKey)
		k := newKey(t)
		snap := backupEncrypted(t, s, store.Group{NS: store.NS(ns), Type: store.TypeVM, ID: "1"}, t0, crypttest.Data(ns), k)
		d := chunksOf(t, s, snap, "disk.img.fidx")[0] // random data: stored uncompressed
		other, err := chunk.EncodeEncryptedBlob(nil, randBytes(ns, testChunk-100), k, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.ChunkPath(d), other, 0o644); err != nil {
			t.Fatal(err)
		}
		vs, want := s, "holds 65436 bytes of ciphertext, the index says 65536 plain bytes"
		if withKey {
			vs, want = keyedView(t, s, k), chunk.ErrDigest.Error()
		}
		_, rep, _ := runVerify(t, vs, map[string]string{"ns": ns})
		r := snapResult(t, rep, snap)
		if errs := strings.Join(r.Errors, "\n"); r.State != SnapFailed || !strings.Contains(errs, want) {
			t.Errorf("with key %v: %s %q, want failed with %q", withKey, r.State, errs, want)
		}
		if moved := !storetest.HasChunk(t, s, d); moved != withKey || rep.ChunksCorrupt != btoi(withKey) {
			t.Errorf("with key %v: chunk moved aside %v, %d corrupt", withKey, moved, rep.ChunksCorrupt)
		}
	}
}
