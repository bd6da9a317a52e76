package chunk

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"

	"github.com/cairnfs/cairn/crypt"
)

// EncryptedHeaderSize is magic[8] + crc32[4] + iv[16] + tag[16], the
// header of MagicEncrypted and MagicEncryptedZstd blobs.
const EncryptedHeaderSize = encryptedHeaderSize

// ErrAuth: an encrypted blob's GCM tag did not verify (wrong key, or the
// IV, tag or ciphertext changed). It wraps crypt.ErrAuth, so either
// sentinel matches with errors.Is. No plaintext comes with it.
var ErrAuth = fmt.Errorf("DataBlob: %w", crypt.ErrAuth)

// plainBufs holds the decrypted zstd payloads of encrypted+compressed
// blobs between decryption and decompression; they are zeroed before they
// go back.
var plainBufs = sync.Pool{New: func() any { return new([]byte) }}

// EncodeEncryptedBlob appends an encrypted DataBlob holding data to
// dst[:0], as PBS's DataBlob::encode with a CryptConfig: with compress
// the data is zstd-compressed first and kept compressed only when that
// is smaller (MagicEncryptedZstd, else MagicEncrypted), then sealed with
// AES-256-GCM under a random IV; the CRC covers the ciphertext.
func EncodeEncryptedBlob(dst, data []byte, key *crypt.Key, compress bool) ([]byte, error) {
	if len(data)+encryptedHeaderSize > MaxBlobSize {
		return dst[:0], fmt.Errorf("%w: %d bytes", ErrTooLarge, len(data))
	}
	dst = append(dst[:0], make([]byte, encryptedHeaderSize)...)
	magic := MagicEncrypted
	plain := data
	if compress && !incompressible(data) {
		dst = compressAppend(dst, data)
		if len(dst)-encryptedHeaderSize < len(data) {
			// Seal in place: room for the tag keeps GCM from reallocating.
			dst = slices.Grow(dst, crypt.TagSize)
			magic, plain = MagicEncryptedZstd, dst[encryptedHeaderSize:]
		} else {
			dst = dst[:encryptedHeaderSize]
		}
	}
	out, iv, tag, err := key.Seal(dst[:encryptedHeaderSize], plain)
	if err != nil {
		return dst[:0], err
	}
	copy(out, magic[:])
	copy(out[BlobHeaderSize:], iv[:])
	copy(out[BlobHeaderSize+crypt.IVSize:], tag[:])
	binary.LittleEndian.PutUint32(out[8:12], crc32.ChecksumIEEE(out[encryptedHeaderSize:]))
	return out, nil
}

// DecodeBlobKey is DecodeBlob that also decrypts: it checks the CRC and
// appends the plain data to dst[:0]. Plain blobs decode as with
// DecodeBlob; encrypted ones need key (nil: ErrEncrypted) and fail with
// ErrAuth, returning no data, when the tag does not verify. maxSize
// bounds the decoded size (0: MaxBlobSize).
func DecodeBlobKey(dst, blob []byte, key *crypt.Key, maxSize int) ([]byte, error) {
	return decodeBlobKey(dst, blob, key, maxSize, blobMode)
}

func decodeBlobKey(dst, blob []byte, key *crypt.Key, maxSize int, m mode) ([]byte, error) {
	kind, err := BlobKind(blob)
	if err != nil {
		return dst[:0], err
	}
	if !kind.Encrypted() {
		return decodeBlob(dst, blob, maxSize, m)
	}
	if _, err := checkBlob(blob, !m.noCRC); err != nil {
		return dst[:0], err
	}
	if key == nil {
		return dst[:0], ErrEncrypted
	}
	if maxSize <= 0 || maxSize > MaxBlobSize {
		maxSize = MaxBlobSize
	}
	iv := [crypt.IVSize]byte(blob[BlobHeaderSize:])
	tag := [crypt.TagSize]byte(blob[BlobHeaderSize+crypt.IVSize:])
	ct := blob[encryptedHeaderSize:]
	if kind == KindEncrypted {
		if len(ct) > maxSize {
			return dst[:0], fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(ct), maxSize)
		}
		out, err := key.Open(dst[:0], ct, iv, tag)
		if err != nil {
			return dst[:0], authError(err)
		}
		return out, nil
	}
	bp := plainBufs.Get().(*[]byte)
	z, err := key.Open((*bp)[:0], ct, iv, tag)
	if err != nil {
		plainBufs.Put(bp)
		return dst[:0], authError(err)
	}
	out, err := unzstd(dst, z, maxSize, m.decoders)
	clear(z)
	*bp = z[:0]
	plainBufs.Put(bp)
	return out, err
}

func authError(err error) error {
	if errors.Is(err, crypt.ErrAuth) {
		return ErrAuth
	}
	return err
}

// DecodeChunkKey is DecodeChunk for stores that may hold encrypted
// chunks: an encrypted blob is decrypted with key and its data must hash
// to want by the keyed digest (key.Digest, PBS's compute_digest); a plain
// blob is checked with the plain SHA-256, as PBS's DataBlob::decode does.
// size >= 0 is the length the index records. On any error no data is
// returned.
func DecodeChunkKey(dst, blob []byte, want Digest, size int, key *crypt.Key) ([]byte, error) {
	return decodeChunkKey(dst, blob, want, size, key, chunkMode)
}

// DecodeChunkData is DecodeChunkKey for readers of a chunk's data that
// keep nothing of its blob (the mount, cat, restores): the blob's CRC is
// not computed, as the digest of the data is checked anyway and is the
// stronger check (the CRC was 12-20% of the mount daemon's CPU profile
// in a cold read from a bucket; README, "Object storage"). A damaged
// payload fails that digest, the zstd decoder or, encrypted, the GCM
// tag; what the CRC alone would catch leaves the data intact (a damaged
// CRC field, or zstd frame checksum, which the decoders skip), and those
// readers get it. Whoever keeps or passes the
// blob on (sync, tape) checks it whole with DecodeChunkKey or
// DecodeChunk, and verify reports a bad CRC, as PBS's does. An
// encrypted blob without key fails with ErrEncrypted. With dst nil, the
// data of a plain blob is returned in place, as a slice of blob.
func DecodeChunkData(dst, blob []byte, want Digest, size int, key *crypt.Key) ([]byte, error) {
	return decodeChunkKey(dst, blob, want, size, key, dataMode)
}

func decodeChunkKey(dst, blob []byte, want Digest, size int, key *crypt.Key, m mode) ([]byte, error) {
	kind, err := BlobKind(blob)
	if err != nil {
		return dst[:0], err
	}
	out, err := decodeBlobKey(dst, blob, key, 0, m)
	if err != nil {
		return dst[:0], err
	}
	if size >= 0 && len(out) != size {
		clear(out)
		return dst[:0], fmt.Errorf("%w: %d bytes, index says %d", ErrCorrupt, len(out), size)
	}
	got := Sum
	if kind.Encrypted() {
		got = func(b []byte) Digest { return key.Digest(b) }
	}
	if d := got(out); d != want {
		clear(out)
		return dst[:0], fmt.Errorf("%w: data hashes to %s", ErrDigest, d)
	}
	return out, nil
}

// EncryptedPayloadSize returns the size of an encrypted blob's ciphertext
// (for MagicEncrypted, the plain data's size), for checks that run
// without the key, as PBS's verify does.
func EncryptedPayloadSize(blob []byte) (int, error) {
	kind, err := BlobKind(blob)
	if err != nil {
		return 0, err
	}
	if !kind.Encrypted() {
		return 0, fmt.Errorf("%w: %s blob is not encrypted", ErrCorrupt, kind)
	}
	if len(blob) < encryptedHeaderSize {
		return 0, fmt.Errorf("%w: encrypted blob of %d bytes", ErrTruncated, len(blob))
	}
	return len(blob) - encryptedHeaderSize, nil
}
