package chunk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// blobErrors are the errors decoding may return.
var blobErrors = []error{ErrBadMagic, ErrBadCRC, ErrTruncated, ErrTooLarge, ErrEncrypted, ErrCorrupt, ErrDigest, ErrAuth}

func isBlobError(err error) bool {
	for _, e := range blobErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzBlob decodes arbitrary blobs, and arbitrary payloads under each
// magic with a correct CRC (so that the fuzzer gets past the CRC): never
// a panic, only the blob errors, never more than the limit decoded, and
// encoding what decoded gives it back.
func FuzzBlob(f *testing.F) {
	for _, data := range [][]byte{nil, []byte("hello cairn\n"), bytes.Repeat([]byte("cairn "), 500), make([]byte, 4096)} {
		for _, compress := range []bool{false, true} {
			blob, err := EncodeBlob(nil, data, compress)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(blob, 0)
			f.Add(blob, 100)
		}
	}
	fixtures, _ := filepath.Glob("testdata/*.blob")
	for _, p := range fixtures {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, 0)
	}
	f.Fuzz(func(t *testing.T, blob []byte, limit int) {
		limit %= 1 << 20
		check := func(blob []byte) {
			out, err := DecodeBlob(nil, blob, limit)
			if err != nil {
				if !isBlobError(err) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if max := limit; max > 0 && len(out) > max {
				t.Fatalf("decoded %d bytes, limit %d", len(out), max)
			}
			again, err := EncodeBlob(nil, out, true)
			if err != nil {
				t.Fatal(err)
			}
			back, err := DecodeChunk(nil, again, Sum(out), len(out))
			if err != nil || !bytes.Equal(back, out) {
				t.Fatalf("round trip: %v", err)
			}
		}
		check(blob)
		if len(blob) >= BlobHeaderSize {
			magics := [][8]byte{MagicPlain, MagicZstd, MagicEncrypted, MagicEncryptedZstd}
			fixed := bytes.Clone(blob)
			copy(fixed, magics[int(blob[0])%len(magics)][:])
			binary.LittleEndian.PutUint32(fixed[8:], crc32.ChecksumIEEE(fixed[BlobHeaderSize:]))
			check(fixed)
		}
	})
}

// A small blob that expands to 100 MiB fails a lower limit without
// decoding (or allocating) all of it.
func TestDecodeLimitBomb(t *testing.T) {
	blob, err := EncodeBlob(nil, make([]byte, 100<<20), true)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := DecodeBlob(nil, blob, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Fatalf("%d-byte blob with a 1 MiB limit allocated %d bytes", len(blob), grew)
	}
	if out, err := DecodeBlob(nil, blob, 0); err != nil || len(out) != 100<<20 {
		t.Fatalf("without a limit: %d bytes, %v", len(out), err)
	}
}

// Every truncation of a blob fails with a blob error.
func TestBlobTruncatedEverywhere(t *testing.T) {
	for _, compress := range []bool{false, true} {
		blob, err := EncodeBlob(nil, bytes.Repeat([]byte("cairn "), 50), compress)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(blob); n++ {
			if _, err := DecodeBlob(nil, blob[:n], 0); err == nil || !isBlobError(err) {
				t.Fatalf("blob cut to %d of %d bytes: %v", n, len(blob), err)
			}
		}
	}
}
