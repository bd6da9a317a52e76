package store

import (
	"context"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
)

// The Uploader's side of encrypted archives (keys.go): a chunk is named
// by the keyed digest and stored as an encrypted, compressed DataBlob.
// The plain zero-chunk shortcuts (chunk.ZeroDigest, the zero chunk
// registered per image) name plain data and are not used: an all-zero
// chunk is the keyed digest of zeros, encrypted once per Uploader and
// size and stored (or found) like any other.

// keyedZeros holds an Uploader's encrypted all-zero chunks by size.
type keyedZeros struct {
	mu sync.Mutex
	m  map[int]*keyedZero
}

type keyedZero struct {
	d    chunk.Digest
	blob []byte
}

// get returns the encrypted zero chunk of size n, making it on first use.
func (z *keyedZeros) get(key *crypt.Key, n int) (*keyedZero, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if c, ok := z.m[n]; ok {
		return c, nil
	}
	zeros := make([]byte, n)
	blob, err := chunk.EncodeEncryptedBlob(nil, zeros, key, true)
	if err != nil {
		return nil, err
	}
	if z.m == nil {
		z.m = map[int]*keyedZero{}
	}
	c := &keyedZero{d: key.Digest(zeros), blob: blob}
	if len(z.m) < maxKeyedZeros { // dynamic chunks come in every size: keep a few
		z.m[n] = c
	}
	return c, nil
}

// maxKeyedZeros bounds the sizes of zero chunks an Uploader keeps.
const maxKeyedZeros = 8

// nameKey sets j.d to the keyed digest of j's chunk; an all-zero one's
// is the Uploader's encrypted zero chunk, returned.
func (u *Uploader) nameKey(j *upJob) (*keyedZero, error) {
	if !j.zero {
		j.d = u.key.Digest(j.buf)
		return nil, nil
	}
	zero, err := u.zeros.get(u.key, len(j.buf)) // the buffer of a hole holds garbage
	if err != nil {
		return nil, err
	}
	j.d = zero.d
	return zero, nil
}

// storeKey stores j's chunk encrypted (zero: the encrypted zero chunk).
func (u *Uploader) storeKey(j *upJob, zero *keyedZero, blob *[]byte) error {
	n := int64(len(j.buf))
	if zero != nil {
		return u.insert(j.d, n, zero.blob, nil)
	}
	u.cpu <- struct{}{}
	var err error
	*blob, err = chunk.EncodeEncryptedBlob(*blob, j.buf, u.key, true)
	<-u.cpu
	if err != nil {
		return err
	}
	return u.insert(j.d, n, *blob, nil)
}

// NewUploader is Store.NewUploader for an archive of this backup: its
// chunks are encrypted with the backup's key when it has one.
func (b *Backup) NewUploader(ctx context.Context, workers int, known KnownSet, stats *UploadStats,
	sink func(d chunk.Digest, size int) error) *Uploader {
	return b.s.NewKeyUploader(ctx, b.key, workers, known, stats, sink)
}
