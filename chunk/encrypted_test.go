package chunk

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/crypt"
	"github.com/klauspost/compress/zstd"
)

type encVectors struct {
	Key   string
	Blobs []struct {
		File           string
		Size           int
		SHA256, Digest string
	}
}

func loadEncVectors(t testing.TB) (encVectors, *crypt.Key) {
	t.Helper()
	raw, err := os.ReadFile("testdata/encrypted-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v encVectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	kb, err := hex.DecodeString(v.Key)
	if err != nil {
		t.Fatal(err)
	}
	k, err := crypt.NewKey(kb)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Blobs) == 0 {
		t.Fatal("no vectors")
	}
	return v, k
}

func mustDigest(t testing.TB, s string) Digest {
	t.Helper()
	d, err := ParseDigest(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestEncryptedVectors decodes encrypted blobs made by
// testdata/gen_encrypted_blobs.py (Python cryptography, not cairn).
func TestEncryptedVectors(t *testing.T) {
	v, k := loadEncVectors(t)
	defer k.Wipe()
	wrong, _ := crypt.GenerateKey()
	defer wrong.Wipe()
	for _, b := range v.Blobs {
		t.Run(b.File, func(t *testing.T) {
			blob, err := os.ReadFile(filepath.Join("testdata", b.File))
			if err != nil {
				t.Fatal(err)
			}
			out, err := DecodeBlobKey(nil, blob, k, 0)
			if err != nil || len(out) != b.Size || Sum(out) != mustDigest(t, b.SHA256) {
				t.Fatalf("decode: %d bytes, %v", len(out), err)
			}
			if _, err := DecodeChunkKey(nil, blob, mustDigest(t, b.Digest), b.Size, k); err != nil {
				t.Fatalf("keyed digest: %v", err)
			}
			if _, err := DecodeChunkKey(nil, blob, mustDigest(t, b.SHA256), b.Size, k); !errors.Is(err, ErrDigest) {
				t.Fatalf("an encrypted chunk passed the plain digest: %v", err)
			}
			if _, err := DecodeChunkKey(nil, blob, mustDigest(t, b.Digest), b.Size+1, k); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("size: %v", err)
			}
			if out, err := DecodeBlobKey(nil, blob, wrong, 0); !errors.Is(err, ErrAuth) || !errors.Is(err, crypt.ErrAuth) || len(out) != 0 {
				t.Fatalf("wrong key: %d bytes, %v", len(out), err)
			}
			if _, err := DecodeBlobKey(nil, blob, nil, 0); !errors.Is(err, ErrEncrypted) {
				t.Fatalf("no key: %v", err)
			}
			if _, err := DecodeBlob(nil, blob, 0); !errors.Is(err, ErrEncrypted) {
				t.Fatalf("DecodeBlob: %v", err)
			}
			if n, err := EncryptedPayloadSize(blob); err != nil || n != len(blob)-EncryptedHeaderSize {
				t.Fatalf("payload size %d, %v", n, err)
			}
			checkTamper(t, blob, k)
		})
	}
}

// checkTamper flips one bit in every byte of blob in turn: each flip
// fails (CRC for the ciphertext, the tag for IV and tag, which the CRC
// does not cover), and a flipped ciphertext with a recomputed CRC fails
// the tag. No flip yields data.
func checkTamper(t *testing.T, blob []byte, k *crypt.Key) {
	t.Helper()
	for i := range blob {
		bad := bytes.Clone(blob)
		bad[i] ^= 0x10
		out, err := DecodeBlobKey(nil, bad, k, 0)
		if err == nil || len(out) != 0 {
			t.Fatalf("flip at %d: %d bytes, %v", i, len(out), err)
		}
		switch {
		case i >= 8 && i < BlobHeaderSize && !errors.Is(err, ErrBadCRC):
			t.Fatalf("flip in CRC at %d: %v", i, err)
		case i >= BlobHeaderSize && i < EncryptedHeaderSize && !errors.Is(err, ErrAuth):
			t.Fatalf("flip in IV/tag at %d: %v", i, err)
		case i >= EncryptedHeaderSize:
			if !errors.Is(err, ErrBadCRC) {
				t.Fatalf("flip in ciphertext at %d: %v", i, err)
			}
			binary.LittleEndian.PutUint32(bad[8:], crc32.ChecksumIEEE(bad[EncryptedHeaderSize:]))
			if out, err := DecodeBlobKey(nil, bad, k, 0); !errors.Is(err, ErrAuth) || len(out) != 0 {
				t.Fatalf("flip in ciphertext at %d, CRC fixed: %d bytes, %v", i, len(out), err)
			}
		}
	}
}

func testData() map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	return map[string][]byte{
		"empty":  {},
		"short":  []byte("hello cairn\n"),
		"text":   bytes.Repeat([]byte("the quick brown fox jumps over the lazy dog\n"), 5000),
		"random": random,
		"zeros":  make([]byte, 1<<20),
	}
}

func TestEncryptedRoundTrip(t *testing.T) {
	k, _ := crypt.GenerateKey()
	defer k.Wipe()
	for name, data := range testData() {
		for _, compress := range []bool{false, true} {
			blob, err := EncodeEncryptedBlob([]byte("junk"), data, k, compress)
			if err != nil {
				t.Fatal(err)
			}
			kind, err := CheckCRC(blob)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			wantKind := KindEncrypted
			if compress && (name == "text" || name == "zeros") {
				wantKind = KindEncryptedZstd
			}
			if kind != wantKind {
				t.Fatalf("%s compress=%v: kind %s, want %s", name, compress, kind, wantKind)
			}
			if kind == KindEncrypted && len(blob) != EncryptedHeaderSize+len(data) {
				t.Fatalf("%s: %d bytes", name, len(blob))
			}
			if len(data) > 16 && bytes.Contains(blob, data[:16]) {
				t.Fatalf("%s: plaintext visible in the blob", name)
			}
			out, err := DecodeChunkKey(nil, blob, Digest(k.Digest(data)), len(data), k)
			if err != nil || !bytes.Equal(out, data) {
				t.Fatalf("%s: %v", name, err)
			}
			again, _ := EncodeEncryptedBlob(nil, data, k, compress)
			if bytes.Equal(again[:EncryptedHeaderSize], blob[:EncryptedHeaderSize]) {
				t.Fatalf("%s: two encodings share IV and tag", name)
			}
			if _, err := DecodeBlobKey(nil, blob, k, 10); len(data) > 10 && !errors.Is(err, ErrTooLarge) {
				t.Fatalf("%s: limit: %v", name, err)
			}
		}
	}
	var wiped crypt.Key
	if _, err := EncodeEncryptedBlob(nil, []byte("x"), &wiped, true); !errors.Is(err, crypt.ErrNoKey) {
		t.Fatalf("unusable key: %v", err)
	}
	if _, err := EncodeEncryptedBlob(nil, make([]byte, MaxBlobSize), k, false); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
}

// TestIndependentDecoder has the Python script decrypt blobs cairn wrote
// (it checks the CRC and tag itself); skipped without python3 and the
// cryptography package.
func TestIndependentDecoder(t *testing.T) {
	if err := exec.Command("python3", "-c", "import cryptography").Run(); err != nil {
		t.Skipf("python3 with the cryptography package not available (%v): the Python vectors still run", err)
	}
	k, _ := crypt.GenerateKey()
	defer k.Wipe()
	exported := k.Export()
	defer clear(exported)
	dir := t.TempDir()
	dec, _ := zstd.NewReader(nil)
	defer dec.Close()
	for name, data := range testData() {
		blob, err := EncodeEncryptedBlob(nil, data, k, true)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".blob")
		if err := os.WriteFile(p, blob, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("python3", "testdata/gen_encrypted_blobs.py", "decode", p)
		cmd.Stdin = strings.NewReader(hex.EncodeToString(exported)) // the key never on a command line
		raw, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: python decoder: %v: %s", name, err, raw)
		}
		var res struct {
			Kind    string
			CRCOK   bool `json:"crc_ok"`
			Payload string
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		payload, _ := hex.DecodeString(res.Payload)
		kind, _ := BlobKind(blob)
		if res.Kind != kind.String() || !res.CRCOK {
			t.Fatalf("%s: python says kind %s crc %v, cairn wrote %s", name, res.Kind, res.CRCOK, kind)
		}
		if kind == KindEncryptedZstd {
			if payload, err = dec.DecodeAll(payload, nil); err != nil {
				t.Fatalf("%s: zstd: %v", name, err)
			}
		}
		if !bytes.Equal(payload, data) {
			t.Fatalf("%s: python decrypted other data", name)
		}
	}
}
