package chunk

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnfs/cairn/crypt"
)

// flipCase is a blob of each kind with the digest its data checks against.
type flipCase struct {
	name string
	blob []byte
	data []byte
	want Digest
	key  *crypt.Key
}

func flipCases(t *testing.T) []flipCase {
	t.Helper()
	_, key := loadEncVectors(t)
	var text []byte
	for i := 0; len(text) < 6000; i++ {
		text = fmt.Appendf(text, "line %d of a chunk that compresses\n", i%50)
	}
	random := randomBytes(3000, 7)
	var cases []flipCase
	for _, c := range []struct {
		name     string
		data     []byte
		compress bool
		kind     Kind
	}{
		{"plain", random, false, KindPlain},
		{"zstd", text, true, KindZstd},
		{"encrypted", random, false, KindEncrypted},
		{"encrypted+zstd", text, true, KindEncryptedZstd},
	} {
		var blob []byte
		var err error
		fc := flipCase{name: c.name, data: c.data, want: Sum(c.data)}
		if c.kind.Encrypted() {
			blob, err = EncodeEncryptedBlob(nil, c.data, key, c.compress)
			fc.key, fc.want = key, key.Digest(c.data)
		} else {
			blob, err = EncodeBlob(nil, c.data, c.compress)
		}
		if err != nil {
			t.Fatal(err)
		}
		if k, _ := BlobKind(blob); k != c.kind {
			t.Fatalf("%s: encoded as %v", c.name, k)
		}
		fc.blob = blob
		cases = append(cases, fc)
	}
	return cases
}

func randomBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// TestDecodeChunkDataFlips flips two bits of each byte of a blob of each
// kind, one at a time: DecodeChunkData, which skips the CRC, never
// returns data other than the chunk's. A flip in the magic, a plain
// payload, or an encrypted blob's IV, tag or ciphertext is an error of
// the codec's classes, with no data. One in the CRC field leaves the
// data intact, and DecodeChunkData returns it; so may one in a zstd
// frame that the decoder does not read into the data (its digest says
// it is the chunk's). DecodeChunkKey (sync, tape) refuses the blob for
// every flip, and CheckCRC (verify, which also checks the rest) for
// every flip in what the CRC covers.
func TestDecodeChunkDataFlips(t *testing.T) {
	for _, c := range flipCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, err := DecodeChunkData(nil, c.blob, c.want, len(c.data), c.key)
			if err != nil || !bytes.Equal(out, c.data) {
				t.Fatalf("intact blob: %v", err)
			}
			damaged := bytes.Clone(c.blob)
			for i := range damaged {
				for _, bit := range []byte{0x01, 0x80} {
					copy(damaged, c.blob)
					damaged[i] ^= bit
					checkFlip(t, c, damaged, i)
				}
			}
		})
	}
}

func checkFlip(t *testing.T, c flipCase, damaged []byte, i int) {
	t.Helper()
	kind, _ := BlobKind(c.blob)
	crcField := i >= 8 && i < BlobHeaderSize
	out, err := DecodeChunkData(make([]byte, 0, len(c.data)), damaged, c.want, len(c.data), c.key)
	switch {
	case err == nil && !bytes.Equal(out, c.data):
		t.Fatalf("byte %d flipped: wrong data, no error", i)
	case err == nil && !crcField && kind != KindZstd:
		t.Fatalf("byte %d flipped: decoded without an error", i)
	case err != nil && crcField:
		t.Fatalf("byte %d (the CRC field) flipped: %v, want the intact data", i, err)
	case err != nil && len(out) != 0:
		t.Fatalf("byte %d flipped: %d bytes returned with the error %v", i, len(out), err)
	case err != nil && !isCodecError(err):
		t.Fatalf("byte %d flipped: %v, not one of the codec's errors", i, err)
	}
	if _, err := DecodeChunkKey(nil, damaged, c.want, len(c.data), c.key); err == nil {
		t.Fatalf("byte %d flipped: DecodeChunkKey took the blob", i)
	}
	covered := i >= BlobHeaderSize
	if kind.Encrypted() {
		covered = i >= EncryptedHeaderSize // IV and tag: the GCM tag's
	}
	if _, err := CheckCRC(damaged); err == nil && (crcField || covered) {
		t.Fatalf("byte %d flipped: CheckCRC took the blob", i)
	}
}

func isCodecError(err error) bool {
	for _, e := range []error{ErrBadMagic, ErrDigest, ErrCorrupt, ErrAuth, ErrTruncated, ErrEncrypted} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
