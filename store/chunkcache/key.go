package chunkcache

import (
	"context"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store/index"
)

// IndexKey returns the key an index opened by store.OpenSnapshotIndex reads
// its chunks with (nil for a plain snapshot's): the index has a Key method. NewReader uses it,
// so every reader of an encrypted archive decrypts without being told.
func IndexKey(x index.Index) *crypt.Key {
	if k, ok := x.(interface{ Key() *crypt.Key }); ok {
		return k.Key()
	}
	return nil
}

// GetKey is Get for a chunk of an encrypted archive: it is decoded with
// key and checked against the keyed digest (key nil: Get). Its data,
// handed out without a reference, is never recycled.
func (c *Cache) GetKey(ctx context.Context, key *crypt.Key, d chunk.Digest, size int) ([]byte, error) {
	b, err := c.get(ctx, key, d, size, false)
	if err != nil {
		return nil, err
	}
	b.escaped.Store(true) // before the release: never recycled
	data := b.data
	b.release()
	return data, nil
}
