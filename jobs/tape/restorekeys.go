package tape

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
)

// Encrypted snapshots on tape. Their chunks travel as they are stored
// (encrypted DataBlobs named by keyed digests). Restore checks each
// chunk it inserts: a plain one is decoded and hashed; an encrypted one
// whose snapshot's key RestoreOptions.SnapshotKey gives is decrypted and
// checked against its keyed digest; one without its key is checked by
// CRC and structure only, as PBS checks it without the key.

// maxTapeManifest bounds the manifest kept from a snapshot archive to
// find its key: a manifest is a small blob.
const maxTapeManifest = 4 << 20

// Encryption notes of a restored snapshot (SnapshotResult.Encryption).
const (
	encDecrypted  = "chunks decrypted with key %s, manifest signature checked"
	encWithoutKey = "key %s not given: encrypted chunks checked by CRC and structure only"
)

// manifestCopy keeps the manifest's bytes while they are written.
type manifestCopy struct{ bytes.Buffer }

func (m *manifestCopy) Write(p []byte) (int, error) {
	if m.Len()+len(p) > maxTapeManifest {
		return 0, fmt.Errorf("%s: %w: larger than %d bytes", store.ManifestName, store.ErrBadManifest, maxTapeManifest)
	}
	return m.Buffer.Write(p)
}

// findKey finds the key of a restored snapshot from its manifest as read
// from tape (p.m): nil for a plain snapshot or one whose key is missing (then
// note says so); an error fails the snapshot (a bad manifest, or a
// signature its key does not verify).
func findKey(p *pendingSnapshot, opt RestoreOptions) (key *crypt.Key, note string, err error) {
	if opt.SnapshotKey == nil {
		return nil, "", nil
	}
	snap, err := ParseSnapshot(p.ref.Snapshot)
	if err != nil {
		return nil, "", err
	}
	m := p.m // checked by checkArchive
	key, err = opt.SnapshotKey(snap, m)
	var km *store.KeyMissingError
	switch {
	case errors.As(err, &km):
		return nil, fmt.Sprintf(encWithoutKey, km.Fingerprint.Short()), nil
	case err != nil:
		return nil, "", err
	case key != nil && m.CryptMode() == store.CryptEncrypt:
		return key, fmt.Sprintf(encDecrypted, key.Fingerprint().Short()), nil
	}
	return key, "", nil
}

// noteKeys records the key each chunk of p is checked with.
func (c *chunkRestore) noteKeys(p *pendingSnapshot) {
	if p.key == nil {
		return
	}
	for _, d := range p.chunks {
		ks := c.keys[d]
		if !containsKey(ks, p.key) {
			c.keys[d] = append(ks, p.key)
		}
	}
}

func containsKey(ks []*crypt.Key, k *crypt.Key) bool {
	for _, x := range ks {
		if x.Fingerprint() == k.Fingerprint() {
			return true
		}
	}
	return false
}

// check judges a chunk read from tape before it is inserted (see the
// top of this file); the decoded data goes to dec, whose buffer it
// returns for the next call (never one that aliases blob: uncompressed
// plain data is decoded in place, and blob buffers are reused).
func (c *chunkRestore) check(d chunk.Digest, blob, dec []byte) (decrypted bool, _ []byte, _ error) {
	keys := c.keys[d] // written before the chunk archives are read
	kind, err := chunk.BlobKind(blob)
	if err != nil {
		return false, dec, err
	}
	if !kind.Encrypted() || len(keys) == 0 {
		plain, err := chunk.DecodeChunk(dec, blob, d, -1)
		if len(plain) > 0 && (len(blob) <= chunk.BlobHeaderSize || &plain[0] != &blob[chunk.BlobHeaderSize]) {
			dec = plain
		}
		if errors.Is(err, chunk.ErrEncrypted) {
			// no key: DecodeChunk checked the CRC, which covers the
			// ciphertext, and the header's size
			err = nil
		}
		return false, dec, err
	}
	for _, k := range keys { // another key may be the chunk's: several snapshots name it
		var out []byte
		out, err = chunk.DecodeChunkKey(dec, blob, d, -1, k)
		clear(out) // decrypted: never aliases blob
		if cap(out) > cap(dec) {
			dec = out[:0]
		}
		if err == nil {
			return true, dec, nil
		}
	}
	return false, dec, err
}
