package verify

import (
	"errors"
	"fmt"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// keyRef is a verify job's number for a key: 0 is no key (plain
// snapshots, and encrypted ones whose key the store lacks, whose chunks
// are checked without decryption); n > 0 is v.keys[n-1].
type keyRef uint16

// chunkRef is a chunk as checked with one key. Checks with different
// keys never stand for each other: a chunk checked without a key (CRC
// and size only), or with another key, is checked again with this one.
type chunkRef struct {
	d   chunk.Digest
	key keyRef
}

// snapKey is what a verify job knows of a snapshot's key.
type snapKey struct {
	ref     keyRef
	key     *crypt.Key        // nil for a plain snapshot and when missing
	fp      crypt.Fingerprint // of key, or of the missing one
	missing bool              // encrypted or signed with a key the store lacks
	err     error             // the manifest's key fingerprint or signature is bad
}

// snapshotKey finds the key of snapshot snap, checking the manifest's
// signature with it (Store.SnapshotKey).
func (v *verifier) snapshotKey(snap store.Snapshot, m *store.Manifest) snapKey {
	key, err := v.s.SnapshotKey(snap, m)
	var km *store.KeyMissingError
	switch {
	case errors.As(err, &km):
		return snapKey{fp: km.Fingerprint, missing: true}
	case err != nil:
		return snapKey{err: err}
	case key == nil:
		return snapKey{}
	}
	return snapKey{ref: v.keyRef(key), key: key, fp: key.Fingerprint()}
}

// keyRef numbers key for this job.
func (v *verifier) keyRef(key *crypt.Key) keyRef {
	v.mu.Lock()
	defer v.mu.Unlock()
	fp := key.Fingerprint()
	for i, k := range v.keys {
		if k.Fingerprint() == fp {
			return keyRef(i + 1)
		}
	}
	v.keys = append(v.keys, key)
	return keyRef(len(v.keys))
}

// note tells how the snapshot's chunks are checked, for the report and
// the log; "" for a plain snapshot.
func (k snapKey) note(m *store.Manifest) string {
	switch {
	case k.err != nil:
		return ""
	case k.missing:
		return fmt.Sprintf("key %s not given: encrypted chunks checked by CRC and size without decryption, "+
			"manifest signature and chunk digests not checked", k.fp.Short())
	case k.key != nil && m.CryptMode() == store.CryptEncrypt:
		return fmt.Sprintf("decrypted with key %s, manifest signature checked", k.fp.Short())
	case k.key != nil:
		return fmt.Sprintf("signed with key %s, manifest signature checked", k.fp.Short())
	}
	return ""
}

// otherKeys returns the keys, besides its own, that other selected
// snapshots read chunk d with.
func (v *verifier) otherKeys(it *item) []keyed {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []keyed
	for i, k := range v.keys {
		r := keyRef(i + 1)
		if r == it.kref {
			continue
		}
		if _, ok := v.chunks[chunkRef{it.d, r}]; ok {
			out = append(out, keyed{r, k})
		}
	}
	return out
}

type keyed struct {
	ref keyRef
	key *crypt.Key
}

// elsewhere judges a chunk that failed with the key of its snapshot
// with the keys other selected snapshots read it with. When one of them
// decrypts it, the chunk is good: its snapshot's index names a chunk of
// another key, which fails that snapshot and leaves the chunk in place.
func (v *verifier) elsewhere(it *item, blob []byte, dec *[]byte) (badChunk, bool) {
	if it.key == nil || blob == nil {
		return badChunk{}, false
	}
	for _, o := range v.otherKeys(it) {
		f, reason, _ := judge(it.d, blob, nil, dec, o.key)
		if reason != "" || !f.keyed {
			continue
		}
		v.mu.Lock()
		v.chunks[chunkRef{it.d, o.ref}] = chunkInfo{state: chunkOK, facts: f}
		v.mu.Unlock()
		v.decrypted.Add(1)
		return badChunk{it: *it, index: true, reason: fmt.Sprintf("index %s: chunk %s does not decrypt with the snapshot's key %s "+
			"but with key %s of another snapshot; the chunk is good and stays in place",
			it.file, it.d, it.key.Fingerprint().Short(), o.key.Fingerprint().Short())}, true
	}
	return badChunk{}, false
}

// encryptedSizeNote says how an encrypted chunk's payload, checked
// without the key, contradicts the plain size an index gives it, or "":
// an uncompressed one holds as many bytes as its plain data, a
// compressed one fewer (it is kept compressed only when that is
// smaller), as PBS writes them.
func encryptedSizeNote(it *item, f chunkFacts) string {
	switch {
	case !f.encrypted || f.size >= 0:
		return ""
	case !f.zstd && int64(f.payload) != it.size:
		return fmt.Sprintf("index %s: %v: encrypted chunk %s holds %d bytes of ciphertext, the index says %d plain bytes; "+
			"the chunk stays in place", it.file, chunkcache.ErrSizeMismatch, it.d, f.payload, it.size)
	case f.zstd && (f.payload <= 0 || int64(f.payload) >= it.size):
		return fmt.Sprintf("index %s: %v: encrypted compressed chunk %s holds %d bytes of ciphertext, not fewer than "+
			"the %d plain bytes the index says; the chunk stays in place", it.file, chunkcache.ErrSizeMismatch, it.d, f.payload, it.size)
	}
	return ""
}
