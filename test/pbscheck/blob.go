package pbscheck

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// DataBlob magics (pbs-datastore/src/file_formats.rs).
var (
	magicPlain     = [8]byte{66, 171, 56, 7, 190, 131, 112, 161}
	magicZstd      = [8]byte{49, 185, 88, 66, 111, 182, 163, 127}
	magicEncr      = [8]byte{123, 103, 133, 190, 34, 45, 76, 240}
	magicEncrZstd  = [8]byte{230, 89, 27, 191, 11, 191, 216, 11}
	errUnknownBlob = errors.New("unknown DataBlob magic")
)

const (
	blobHeader      = 12      // magic[8] crc32[4]
	encrBlobHeader  = 12 + 32 // + iv[16] tag[16]
	maxBlobSize     = 128 << 20
	maxEncodedBytes = maxBlobSize + encrBlobHeader
)

// blobKind is how a DataBlob stores its payload.
type blobKind int

const (
	kindPlain blobKind = iota
	kindZstd
	kindEncrypted
	kindEncryptedZstd
)

func (k blobKind) encrypted() bool { return k == kindEncrypted || k == kindEncryptedZstd }

func (k blobKind) String() string {
	return [...]string{"plain", "zstd", "encrypted", "encrypted+zstd"}[k]
}

// checkBlob checks a DataBlob's magic and CRC-32 (IEEE, over what
// follows the header: for encrypted blobs the header includes iv and
// tag, as PBS's header_size) and returns its kind.
func checkBlob(b []byte) (blobKind, error) {
	if len(b) < blobHeader {
		return 0, fmt.Errorf("DataBlob of %d bytes: shorter than its header", len(b))
	}
	if len(b) > maxEncodedBytes {
		return 0, fmt.Errorf("DataBlob of %d bytes: over PBS's limit", len(b))
	}
	var kind blobKind
	hdr := blobHeader
	switch [8]byte(b[:8]) {
	case magicPlain:
		kind = kindPlain
	case magicZstd:
		kind = kindZstd
	case magicEncr:
		kind, hdr = kindEncrypted, encrBlobHeader
	case magicEncrZstd:
		kind, hdr = kindEncryptedZstd, encrBlobHeader
	default:
		return 0, fmt.Errorf("%w %v", errUnknownBlob, b[:8])
	}
	if len(b) < hdr {
		return kind, fmt.Errorf("%s DataBlob of %d bytes: shorter than its header", kind, len(b))
	}
	want := binary.LittleEndian.Uint32(b[8:12])
	if got := crc32.ChecksumIEEE(b[hdr:]); got != want {
		return kind, fmt.Errorf("%s DataBlob: CRC-32 stored %08x, computed %08x", kind, want, got)
	}
	return kind, nil
}

var decoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlobSize))
	if err != nil {
		panic(err)
	}
	return d
}}

// decodeBlob checks a plain or zstd DataBlob and returns its plain data.
func decodeBlob(b []byte) ([]byte, error) {
	kind, err := checkBlob(b)
	if err != nil {
		return nil, err
	}
	switch kind {
	case kindPlain:
		return b[blobHeader:], nil
	case kindZstd:
		d := decoders.Get().(*zstd.Decoder)
		defer decoders.Put(d)
		out, err := d.DecodeAll(b[blobHeader:], nil)
		if err != nil {
			return nil, fmt.Errorf("zstd DataBlob: %v", err)
		}
		if len(out) > maxBlobSize {
			return nil, fmt.Errorf("zstd DataBlob decodes to %d bytes: over PBS's limit", len(out))
		}
		return out, nil
	}
	return nil, fmt.Errorf("%s DataBlob: cannot decode without the key", kind)
}

// decodeChunk decodes a chunk blob and checks its length and digest.
func decodeChunk(b []byte, digest [32]byte, size uint64) ([]byte, error) {
	data, err := decodeBlob(b)
	if err != nil {
		return nil, err
	}
	if uint64(len(data)) != size {
		return nil, fmt.Errorf("chunk holds %d bytes, the index says %d", len(data), size)
	}
	if sum := sha256.Sum256(data); sum != digest {
		return nil, fmt.Errorf("SHA-256 of the chunk's data is %x", sum)
	}
	return data, nil
}
