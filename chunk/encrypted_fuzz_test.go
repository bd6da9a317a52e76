package chunk

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// FuzzEncryptedBlob decodes arbitrary blobs with a key, and arbitrary
// payloads under the encrypted magics with a correct CRC: never a panic,
// only blob errors (a forged tag fails with ErrAuth and no data), never
// more than the limit decoded.
func FuzzEncryptedBlob(f *testing.F) {
	_, k := loadEncVectors(f)
	defer k.Wipe()
	for _, data := range [][]byte{nil, []byte("hello cairn\n"), bytes.Repeat([]byte("cairn "), 500)} {
		for _, compress := range []bool{false, true} {
			blob, err := EncodeEncryptedBlob(nil, data, k, compress)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(blob, 0)
		}
	}
	fixtures, _ := filepath.Glob("testdata/enc*.blob")
	for _, p := range fixtures {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0)
		f.Add(b, 100)
	}
	f.Fuzz(func(t *testing.T, blob []byte, limit int) {
		limit %= 1 << 20
		check := func(blob []byte) {
			out, err := DecodeBlobKey(nil, blob, k, limit)
			if err != nil {
				if !isBlobError(err) {
					t.Fatalf("unexpected error %v", err)
				}
				if len(out) != 0 {
					t.Fatalf("%d bytes with error %v", len(out), err)
				}
				return
			}
			if limit > 0 && len(out) > limit {
				t.Fatalf("decoded %d bytes, limit %d", len(out), limit)
			}
			if kind, _ := BlobKind(blob); kind.Encrypted() {
				if _, err := DecodeChunkKey(nil, blob, Digest(k.Digest(out)), len(out), k); err != nil {
					t.Fatalf("decoded, but not as a chunk: %v", err)
				}
			}
		}
		check(blob)
		if len(blob) >= EncryptedHeaderSize {
			fixed := bytes.Clone(blob)
			magic := MagicEncrypted
			if blob[0]&1 == 1 {
				magic = MagicEncryptedZstd
			}
			copy(fixed, magic[:])
			binary.LittleEndian.PutUint32(fixed[8:], crc32.ChecksumIEEE(fixed[EncryptedHeaderSize:]))
			check(fixed)
		}
	})
}
