package snapdiff

import (
	"errors"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

// Indexes counts the chunks of y (and their bytes) that x does not
// have: at the same position with the same range for two images
// (positional), else anywhere in x (by digest; the set of x's digests
// grows with the index, 32 bytes per chunk).
func Indexes(x, y index.Index, positional bool) (chunks int, bytes int64, err error) {
	var have map[chunk.Digest]struct{}
	if !positional {
		have = make(map[chunk.Digest]struct{}, x.Len())
		for i := range x.Len() {
			d, _, _ := x.Chunk(i)
			have[d] = struct{}{}
		}
	}
	for i := range y.Len() {
		d, start, end := y.Chunk(i)
		same := false
		if positional && i < x.Len() {
			dx, sx, ex := x.Chunk(i)
			same = dx == d && sx == start && ex == end
		} else if !positional {
			_, same = have[d]
		}
		if !same {
			chunks++
			bytes += end - start
		}
	}
	return chunks, bytes, errors.Join(x.Err(), y.Err())
}
