package chunk

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// DataBlob magics (PBS file_formats.rs).
var (
	MagicPlain         = [8]byte{66, 171, 56, 7, 190, 131, 112, 161}
	MagicZstd          = [8]byte{49, 185, 88, 66, 111, 182, 163, 127}
	MagicEncrypted     = [8]byte{123, 103, 133, 190, 34, 45, 76, 240}
	MagicEncryptedZstd = [8]byte{230, 89, 27, 191, 11, 191, 216, 11}
)

// BlobHeaderSize is magic[8] + crc32[4]; encrypted blobs add iv and tag.
const (
	BlobHeaderSize      = 12
	encryptedHeaderSize = BlobHeaderSize + 16 + 16
	// MaxBlobSize is the largest blob PBS accepts.
	MaxBlobSize = 128 << 20
)

// Sentinel errors of the blob codec, matched with errors.Is.
var (
	ErrBadMagic  = errors.New("not a DataBlob (unknown magic)")
	ErrBadCRC    = errors.New("DataBlob CRC mismatch")
	ErrTruncated = errors.New("DataBlob truncated")
	ErrTooLarge  = errors.New("DataBlob larger than 128 MiB")
	ErrEncrypted = errors.New("DataBlob is encrypted")
	ErrCorrupt   = errors.New("DataBlob payload corrupt")
	ErrDigest    = errors.New("chunk digest mismatch")
)

// Kind tells how a blob's payload is stored.
type Kind int

// Blob kinds, one per magic.
const (
	KindPlain Kind = iota + 1
	KindZstd
	KindEncrypted
	KindEncryptedZstd
)

func (k Kind) String() string {
	switch k {
	case KindPlain:
		return "plain"
	case KindZstd:
		return "zstd"
	case KindEncrypted:
		return "encrypted"
	case KindEncryptedZstd:
		return "encrypted+zstd"
	}
	return "unknown"
}

// Encrypted reports whether the kind is one of the encrypted ones.
func (k Kind) Encrypted() bool { return k == KindEncrypted || k == KindEncryptedZstd }

// BlobKind returns the kind named by blob's magic.
func BlobKind(blob []byte) (Kind, error) {
	if len(blob) < BlobHeaderSize {
		return 0, fmt.Errorf("%w: %d bytes, header needs %d", ErrTruncated, len(blob), BlobHeaderSize)
	}
	switch [8]byte(blob[:8]) {
	case MagicPlain:
		return KindPlain, nil
	case MagicZstd:
		return KindZstd, nil
	case MagicEncrypted:
		return KindEncrypted, nil
	case MagicEncryptedZstd:
		return KindEncryptedZstd, nil
	}
	return 0, ErrBadMagic
}

// encoderPool holds idle zstd encoders. Unlike a sync.Pool it survives
// garbage collections: an encoder's history buffer is several MiB, and
// making it again after each collection costs page faults that showed up
// as a tenth of a backup's page faults. It holds at most encoderPoolMax
// idle encoders; more may be in use at once, and those are let go.
type encoderPool struct {
	free  chan *zstd.Encoder
	level zstd.EncoderLevel
}

const encoderPoolMax = 16

func (p encoderPool) Get() *zstd.Encoder {
	select {
	case e := <-p.free:
		return e
	default:
	}
	// No frame checksum (as PBS writes them): the chunk's SHA-256
	// digest covers the data, and the xxhash is a visible share of a
	// backup's CPU.
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(p.level),
		zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true), zstd.WithEncoderCRC(false))
	if err != nil {
		panic(err) // only on invalid options
	}
	return e
}

func (p encoderPool) Put(e *zstd.Encoder) {
	select {
	case p.free <- e:
	default:
	}
}

// smallChunk: chunks below it are compressed harder (zstd's "better"
// level, about 7, instead of 1). They are the chunks of an incremental
// backup (a changed file alone between reused chunks, metadata), where
// they are most of what the backup stores: on Go's source files, one
// file a chunk, 10.5% smaller than at level 1 (metadata 4%). Their CPU
// cost is small beside a backup's: large chunks, most of any first
// backup's bytes, stay at level 1. The level is no part of the format.
const smallChunk = 128 << 10

var (
	encoders      = encoderPool{free: make(chan *zstd.Encoder, encoderPoolMax), level: zstd.SpeedFastest}
	smallEncoders = encoderPool{free: make(chan *zstd.Encoder, encoderPoolMax), level: zstd.SpeedBetterCompression}
	decoders      = sync.Pool{New: func() any { return newDecoder() }}
	// chunkDecoders skip the zstd frame's content checksum (xxhash64):
	// DecodeChunk checks the SHA-256 digest of the same bytes anyway.
	chunkDecoders = sync.Pool{New: func() any { return newDecoder(zstd.IgnoreChecksum(true)) }}
)

// mode is how a blob is decoded: with which zstd decoders, and whether
// its CRC is computed.
type mode struct {
	decoders *sync.Pool
	noCRC    bool // the caller checks the data's digest (DecodeChunkData)
}

var (
	blobMode  = mode{decoders: &decoders}
	chunkMode = mode{decoders: &chunkDecoders}
	dataMode  = mode{decoders: &chunkDecoders, noCRC: true}
)

func newDecoder(opts ...zstd.DOption) *zstd.Decoder {
	opts = append([]zstd.DOption{zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxBlobSize)}, opts...)
	d, err := zstd.NewReader(nil, opts...)
	if err != nil {
		panic(err) // only on invalid options
	}
	return d
}

// compressAppend appends data compressed with zstd to dst, at the level
// its size asks for (smallChunk).
func compressAppend(dst, data []byte) []byte {
	p := encoders
	if len(data) < smallChunk {
		p = smallEncoders
	}
	enc := p.Get()
	dst = enc.EncodeAll(data, dst)
	p.Put(enc)
	return dst
}

// EncodeBlob appends a DataBlob holding data to dst[:0]. With compress the
// payload is zstd (level 1; small chunks harder, see smallChunk), unless
// that does not make it smaller, in which case it is stored plain.
func EncodeBlob(dst, data []byte, compress bool) ([]byte, error) {
	hdr, payload, err := EncodeBlobParts(dst, data, compress)
	if err != nil || len(payload) == 0 || &payload[0] != &data[0] {
		return hdr, err // compressed: hdr holds the whole blob
	}
	return append(hdr, data...), nil
}

// sampleSize and samples describe the compressibility probe of a chunk.
const (
	sampleSize = 16 << 10
	samples    = 8
	// probeMin is the smallest input worth probing before compressing.
	probeMin = 1 << 20
)

// incompressible reports whether data looks incompressible: every one of
// a few samples spread over it fails to shrink by 2% at zstd level 1.
// Compressing random data costs as much as hashing it; this probe costs
// a small fraction of that and lets backups of incompressible data skip it.
func incompressible(data []byte) bool {
	if len(data) < probeMin {
		return false
	}
	enc := encoders.Get()
	defer encoders.Put(enc)
	buf := make([]byte, 0, sampleSize+512)
	step := (len(data) - sampleSize) / (samples - 1)
	for i := 0; i < samples; i++ {
		s := data[i*step : i*step+sampleSize]
		buf = enc.EncodeAll(s, buf[:0])
		if len(buf) < sampleSize*98/100 {
			return false
		}
	}
	return true
}

// EncodeBlobParts is EncodeBlob without copying plain data: it returns the
// blob as a header (appended to dst[:0]) and a payload; for a plain blob
// the payload is data itself, for a compressed one the header slice holds
// the whole blob and payload is empty. Write header, then payload.
// Large inputs whose samples do not compress are stored plain without
// compressing the whole.
func EncodeBlobParts(dst, data []byte, compress bool) (header, payload []byte, err error) {
	if len(data)+BlobHeaderSize > MaxBlobSize {
		return dst[:0], nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(data))
	}
	dst = append(dst[:0], make([]byte, BlobHeaderSize)...)
	if compress && !incompressible(data) {
		dst = compressAppend(dst, data)
		if len(dst)-BlobHeaderSize < len(data) {
			finishHeader(dst, MagicZstd)
			return dst, nil, nil
		}
		dst = dst[:BlobHeaderSize]
	}
	copy(dst, MagicPlain[:])
	binary.LittleEndian.PutUint32(dst[8:12], crc32.ChecksumIEEE(data))
	return dst, data, nil
}

func finishHeader(blob []byte, magic [8]byte) {
	copy(blob, magic[:])
	binary.LittleEndian.PutUint32(blob[8:12], crc32.ChecksumIEEE(blob[BlobHeaderSize:]))
}

// CheckCRC verifies the blob's magic and CRC and returns its kind.
func CheckCRC(blob []byte) (Kind, error) { return checkBlob(blob, true) }

// checkBlob checks the blob's magic and sizes, and with crc its CRC, and
// returns its kind.
func checkBlob(blob []byte, crc bool) (Kind, error) {
	kind, err := BlobKind(blob)
	if err != nil {
		return 0, err
	}
	if len(blob) > MaxBlobSize {
		return kind, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(blob))
	}
	if kind.Encrypted() && len(blob) < encryptedHeaderSize {
		return kind, fmt.Errorf("%w: encrypted blob of %d bytes", ErrTruncated, len(blob))
	}
	if !crc {
		return kind, nil
	}
	// PBS's CRC covers what follows the header: for encrypted blobs the
	// ciphertext only, not the IV and tag (data_blob.rs compute_crc).
	start := BlobHeaderSize
	if kind.Encrypted() {
		start = encryptedHeaderSize
	}
	want := binary.LittleEndian.Uint32(blob[8:12])
	if got := crc32.ChecksumIEEE(blob[start:]); got != want {
		return kind, fmt.Errorf("%w: stored %08x, computed %08x", ErrBadCRC, want, got)
	}
	return kind, nil
}

// DecodeBlob checks the CRC and appends the plain data to dst[:0]; with a
// nil dst, the data of an uncompressed blob is returned in place, as a
// slice of blob, without a copy.
// Encrypted blobs fail with ErrEncrypted (after their CRC was checked).
// maxSize bounds the decoded size (0: MaxBlobSize).
func DecodeBlob(dst, blob []byte, maxSize int) ([]byte, error) {
	return decodeBlob(dst, blob, maxSize, blobMode)
}

func decodeBlob(dst, blob []byte, maxSize int, m mode) ([]byte, error) {
	kind, err := checkBlob(blob, !m.noCRC)
	if err != nil {
		return dst[:0], err
	}
	if maxSize <= 0 || maxSize > MaxBlobSize {
		maxSize = MaxBlobSize
	}
	payload := blob[BlobHeaderSize:]
	switch kind {
	case KindPlain:
		if len(payload) > maxSize {
			return dst[:0], fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(payload), maxSize)
		}
		if dst == nil {
			return payload, nil
		}
		return append(dst[:0], payload...), nil
	case KindZstd:
		return unzstd(dst, payload, maxSize, m.decoders)
	}
	return dst[:0], ErrEncrypted
}

// unzstd appends the zstd frame payload decoded to dst[:0], at most
// maxSize bytes.
func unzstd(dst, payload []byte, maxSize int, decoders *sync.Pool) ([]byte, error) {
	if maxSize < MaxBlobSize {
		return decodeLimited(dst, payload, maxSize)
	}
	dec := decoders.Get().(*zstd.Decoder)
	out, err := dec.DecodeAll(payload, dst[:0])
	decoders.Put(dec)
	if err != nil {
		return dst[:0], fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	if len(out) > maxSize {
		return dst[:0], fmt.Errorf("%w: decoded %d bytes, limit %d", ErrTooLarge, len(out), maxSize)
	}
	return out, nil
}

// decodeLimited decodes a zstd payload that may hold at most maxSize
// bytes, stopping as soon as it holds more: memory grows with maxSize, not
// with what a small hostile blob may expand to (up to MaxBlobSize).
func decodeLimited(dst, payload []byte, maxSize int) ([]byte, error) {
	dec := decoders.Get().(*zstd.Decoder)
	defer decoders.Put(dec)
	if err := dec.Reset(bytes.NewReader(payload)); err != nil {
		return dst[:0], fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	defer dec.Reset(nil)
	w := bytes.NewBuffer(dst[:0])
	n, err := io.Copy(w, io.LimitReader(dec, int64(maxSize)+1))
	if err != nil {
		return dst[:0], fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
	}
	if n > int64(maxSize) {
		return dst[:0], fmt.Errorf("%w: decoded more than the limit of %d bytes", ErrTooLarge, maxSize)
	}
	return w.Bytes(), nil
}

// DecodeChunkReuse is DecodeChunk for loops that reuse their buffers:
// plain data is returned in place (a slice of blob); compressed data is
// decoded into *scratch, which keeps the grown buffer for the next call.
func DecodeChunkReuse(scratch *[]byte, blob []byte, want Digest, size int) ([]byte, error) {
	if kind, err := BlobKind(blob); err != nil || kind != KindZstd {
		return DecodeChunk(nil, blob, want, size)
	}
	out, err := DecodeChunk((*scratch)[:0], blob, want, size)
	if cap(out) > cap(*scratch) {
		*scratch = out[:0]
	}
	return out, err
}

// DecodeChunk decodes blob and checks that its plain data hashes to want
// and, when size >= 0, has that length.
func DecodeChunk(dst, blob []byte, want Digest, size int) ([]byte, error) {
	out, err := decodeBlob(dst, blob, 0, chunkMode)
	if err != nil {
		return out, err
	}
	if size >= 0 && len(out) != size {
		return out, fmt.Errorf("%w: %d bytes, index says %d", ErrCorrupt, len(out), size)
	}
	if got := Sum(out); got != want {
		return out, fmt.Errorf("%w: data hashes to %s", ErrDigest, got)
	}
	return out, nil
}
