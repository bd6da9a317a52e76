package chunk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

func TestBlobRoundTrip(t *testing.T) {
	cases := map[string]struct {
		data     []byte
		compress bool
		kind     Kind
	}{
		"empty":      {nil, true, KindPlain},
		"zeros":      {make([]byte, 1<<20), true, KindZstd},
		"random":     {randomData(1<<20, 9), true, KindPlain},
		"text-plain": {bytes.Repeat([]byte("cairn "), 1000), false, KindPlain},
		"text-zstd":  {bytes.Repeat([]byte("cairn "), 1000), true, KindZstd},
		"one-byte":   {[]byte{7}, true, KindPlain},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			blob, err := EncodeBlob(nil, tc.data, tc.compress)
			if err != nil {
				t.Fatal(err)
			}
			kind, err := CheckCRC(blob)
			if err != nil || kind != tc.kind {
				t.Fatalf("kind %v err %v, want %v", kind, err, tc.kind)
			}
			if kind == KindZstd && len(blob) >= len(tc.data)+BlobHeaderSize {
				t.Fatalf("zstd blob of %d bytes does not shrink %d", len(blob), len(tc.data))
			}
			out, err := DecodeChunk(nil, blob, Sum(tc.data), len(tc.data))
			if err != nil || !bytes.Equal(out, tc.data) {
				t.Fatalf("decode: %v (equal %v)", err, bytes.Equal(out, tc.data))
			}
		})
	}
}

// TestBlobFixtures decodes committed blobs of each magic and checks the
// errors of broken ones.
func TestBlobFixtures(t *testing.T) {
	cases := []struct {
		file string
		want error // nil: decodes to "hello cairn\n"
	}{
		{"plain.blob", nil},
		{"zstd.blob", nil},
		{"bad-crc.blob", ErrBadCRC},
		{"bad-magic.blob", ErrBadMagic},
		{"truncated.blob", ErrTruncated},
		{"encrypted.blob", ErrEncrypted},
		{"zstd-garbage.blob", ErrCorrupt},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			blob, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			out, err := DecodeBlob(nil, blob, 0)
			if tc.want == nil {
				if err != nil || string(out) != "hello cairn\n" {
					t.Fatalf("got %q, %v", out, err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestDecodeChunkMismatch(t *testing.T) {
	data := []byte("some chunk data")
	blob, _ := EncodeBlob(nil, data, true)
	if _, err := DecodeChunk(nil, blob, Sum([]byte("other")), -1); !errors.Is(err, ErrDigest) {
		t.Fatalf("digest: got %v", err)
	}
	if _, err := DecodeChunk(nil, blob, Sum(data), 3); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("size: got %v", err)
	}
	// Flip each byte in turn: every flip must be caught.
	for i := range blob {
		bad := bytes.Clone(blob)
		bad[i] ^= 0x40
		if _, err := DecodeChunk(nil, bad, Sum(data), len(data)); err == nil {
			t.Fatalf("flip at %d not detected", i)
		}
	}
}

func TestBlobTooLarge(t *testing.T) {
	if _, err := EncodeBlob(nil, make([]byte, MaxBlobSize), false); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	blob, _ := EncodeBlob(nil, make([]byte, 1<<20), true)
	if _, err := DecodeBlob(nil, blob, 1000); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("decode limit: got %v", err)
	}
}

// makeFixtures writes the blob fixtures; run with CAIRN_UPDATE_VECTORS=1.
func TestMakeBlobFixtures(t *testing.T) {
	if os.Getenv("CAIRN_UPDATE_VECTORS") != "1" {
		t.Skip("fixtures are committed; set CAIRN_UPDATE_VECTORS=1 to rewrite them")
	}
	msg := []byte("hello cairn\n")
	plain, _ := EncodeBlob(nil, msg, false)
	zst := forceZstd(msg) // a 12-byte message does not shrink: build it by hand
	badCRC := bytes.Clone(plain)
	badCRC[len(badCRC)-1] ^= 1
	badMagic := bytes.Clone(plain)
	badMagic[0] = 0
	enc := append(append([]byte{}, MagicEncrypted[:]...), make([]byte, 4+32+8)...)
	binary.LittleEndian.PutUint32(enc[8:], crc32.ChecksumIEEE(enc[EncryptedHeaderSize:]))
	garbage := append(append([]byte{}, MagicZstd[:]...), 0, 0, 0, 0, 1, 2, 3, 4, 5)
	binary.LittleEndian.PutUint32(garbage[8:], crc32.ChecksumIEEE(garbage[12:]))
	files := map[string][]byte{"plain.blob": plain, "zstd.blob": zst, "bad-crc.blob": badCRC,
		"bad-magic.blob": badMagic, "truncated.blob": plain[:10], "encrypted.blob": enc, "zstd-garbage.blob": garbage}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func forceZstd(msg []byte) []byte {
	enc := encoders.Get()
	defer encoders.Put(enc)
	out := enc.EncodeAll(msg, make([]byte, BlobHeaderSize))
	finishHeader(out, MagicZstd)
	return out
}

func BenchmarkDecodeChunkIncompressible(b *testing.B) {
	data := randomData(4<<20, 10)
	blob, _ := EncodeBlob(nil, data, true)
	d := Sum(data)
	buf := make([]byte, 0, len(data))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeChunk(buf, blob, d, len(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeChunkZstd(b *testing.B) {
	data := bytes.Repeat(randomData(64<<10, 11)[:2000], 4<<20/2000)
	blob, _ := EncodeBlob(nil, data, true)
	d := Sum(data)
	buf := make([]byte, 0, len(data))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeChunk(buf, blob, d, len(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeIncompressible(b *testing.B) {
	data := randomData(4<<20, 12)
	var blob []byte
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		blob, _ = EncodeBlob(blob, data, true)
	}
}

func BenchmarkSum(b *testing.B) {
	data := randomData(4<<20, 13)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Sum(data)
	}
}

// TestCompressProbe: a random chunk is stored plain without being
// compressed whole; one with compressible regions is still compressed.
func TestCompressProbe(t *testing.T) {
	random := randomData(4<<20, 14)
	if !incompressible(random) {
		t.Fatal("random data judged compressible")
	}
	hdr, payload, err := EncodeBlobParts(nil, random, true)
	if err != nil || len(hdr) != BlobHeaderSize || &payload[0] != &random[0] {
		t.Fatal("random chunk: want a plain blob sharing the input")
	}
	mixed := bytes.Clone(random)
	copy(mixed[1<<20:], make([]byte, 1<<20))
	if incompressible(mixed) {
		t.Fatal("chunk with 1 MiB of zeros judged incompressible")
	}
	blob, _ := EncodeBlob(nil, mixed, true)
	if k, _ := BlobKind(blob); k != KindZstd || len(blob) > 3<<20+(1<<19) {
		t.Fatalf("mixed chunk: kind %v size %d", k, len(blob))
	}
	whole := append(bytes.Clone(hdr), payload...)
	if out, err := DecodeChunk(nil, whole, Sum(random), len(random)); err != nil || !bytes.Equal(out, random) {
		t.Fatalf("parts do not make a valid blob: %v", err)
	}
}

// TestSmallChunksHarder: a chunk below smallChunk is compressed harder
// than level 1 (an incremental backup's chunks are mostly small), a
// large one at level 1; both decode to the data.
func TestSmallChunksHarder(t *testing.T) {
	var text []byte
	for i := 0; len(text) < 3*smallChunk; i++ {
		text = fmt.Appendf(text, "func f%d(x int) int { return x*%d + %d } // line %d\n", i%97, i%13, i%31, i)
	}
	for _, n := range []int{smallChunk / 2, 2 * smallChunk} {
		data := text[:n]
		blob, err := EncodeBlob(nil, data, true)
		if err != nil {
			t.Fatal(err)
		}
		fastest := len(forceZstd(data))
		if small := n < smallChunk; small != (len(blob) < fastest) {
			t.Errorf("%d bytes: blob %d bytes, level 1 %d", n, len(blob), fastest)
		}
		got, err := DecodeChunk(nil, blob, Sum(data), len(data))
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%d bytes: decode %v", n, err)
		}
	}
}
