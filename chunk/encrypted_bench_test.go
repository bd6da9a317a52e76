package chunk

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/cairnfs/cairn/crypt"
)

// benchData returns 4 MiB chunks: "text" compresses about 3:1 (words
// drawn at random from a small vocabulary), "random" does not compress.
func benchData() map[string][]byte {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"cairn", "backup", "chunk", "store", "the", "of", "encrypted", "proxmox", "index", "snapshot", "42", "\n"}
	text := make([]byte, 0, 4<<20+16)
	for len(text) < 4<<20 {
		text = append(text, words[r.IntN(len(words))]...)
		text = append(text, ' ', byte('a'+r.IntN(26)))
	}
	random := make([]byte, 4<<20)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	return map[string][]byte{"text": text[:4<<20], "random": random}
}

// BenchmarkEncode4MiB compares compress-only with encrypt+compress per
// 4 MiB chunk (the target: encrypted ≥ 85% of plain throughput).
func BenchmarkEncode4MiB(b *testing.B) {
	k, err := crypt.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	defer k.Wipe()
	for _, name := range []string{"text", "random"} {
		data := benchData()[name]
		for _, mode := range []string{"compress", "encrypt+compress"} {
			b.Run(fmt.Sprintf("%s/%s", name, mode), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				var buf []byte
				for b.Loop() {
					if mode == "compress" {
						buf, err = EncodeBlob(buf, data, true)
					} else {
						buf, err = EncodeEncryptedBlob(buf, data, k, true)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDecodeChunk4MiB compares reading a plain and an encrypted
// chunk (digest check included: SHA-256, or the keyed digest).
func BenchmarkDecodeChunk4MiB(b *testing.B) {
	k, err := crypt.GenerateKey()
	if err != nil {
		b.Fatal(err)
	}
	defer k.Wipe()
	for _, name := range []string{"text", "random"} {
		data := benchData()[name]
		plain, _ := EncodeBlob(nil, data, true)
		enc, _ := EncodeEncryptedBlob(nil, data, k, true)
		for _, mode := range []string{"plain", "encrypted"} {
			b.Run(fmt.Sprintf("%s/%s", name, mode), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				buf := make([]byte, 0, len(data))
				for b.Loop() {
					if mode == "plain" {
						_, err = DecodeChunk(buf, plain, Sum(data), len(data))
					} else {
						_, err = DecodeChunkKey(buf, enc, Digest(k.Digest(data)), len(data), k)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
