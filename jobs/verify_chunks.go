package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
)

// badChunk is a chunk judged corrupt or missing.
type badChunk struct {
	it     item
	reason string
}

// loaded is a chunk read by the read pool for the verify pool.
type loaded struct {
	i    int
	blob []byte
	err  error
}

// verifyChunks reads items in order on read-threads goroutines and checks
// them on verify-threads goroutines, connected by bounded channels, so at
// most read-threads + 2·verify-threads + verify-threads blobs are in
// memory. It returns the chunks judged bad; on cancellation it stops
// within a chunk or two per worker.
func (v *verifier) verifyChunks(ctx context.Context, j *Job, items []item) []badChunk {
	if len(items) == 0 {
		return nil
	}
	feed := make(chan int, v.opt.ReadThreads)
	out := make(chan loaded, max(2*v.opt.VerifyThreads, 3))
	var bufs sync.Pool
	getBuf := func() []byte {
		if b, ok := bufs.Get().(*[]byte); ok {
			return *b
		}
		return nil
	}
	putBuf := func(b []byte) {
		if cap(b) > 0 {
			bufs.Put(&b)
		}
	}
	go func() {
		defer close(feed)
		for i := range items {
			select {
			case feed <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var readers sync.WaitGroup
	for range v.opt.ReadThreads {
		readers.Go(func() {
			for i := range feed {
				if ctx.Err() != nil {
					continue
				}
				b, err := v.read(ctx, items[i].d, getBuf())
				select {
				case out <- loaded{i: i, blob: b, err: err}:
				case <-ctx.Done():
					putBuf(b)
				}
			}
		})
	}
	go func() {
		readers.Wait()
		close(out)
	}()
	var mu sync.Mutex
	var bad []badChunk
	var verifiers sync.WaitGroup
	for range v.opt.VerifyThreads {
		verifiers.Go(func() {
			var dec []byte
			for l := range out {
				if ctx.Err() == nil {
					if reason := v.checkChunk(ctx, j, &items[l.i], l.blob, l.err, &dec); reason != "" {
						mu.Lock()
						bad = append(bad, badChunk{items[l.i], reason})
						mu.Unlock()
					}
				}
				putBuf(l.blob)
			}
		})
	}
	verifiers.Wait()
	slices.SortFunc(bad, func(a, b badChunk) int { return slices.Compare(a.it.d[:], b.it.d[:]) })
	return bad
}

// checkChunk judges one chunk; a chunk that fails is read once more
// before it is condemned, renamed aside and recorded. It returns the
// reason it is bad, or "".
func (v *verifier) checkChunk(ctx context.Context, j *Job, it *item, blob []byte, rerr error, dec *[]byte) string {
	reason, _ := judge(it, blob, rerr, dec)
	if reason == "" {
		v.passed(j, it, len(blob))
		return ""
	}
	if ctx.Err() != nil {
		return "" // cancelled: judge nothing
	}
	blob2, err2 := v.read(ctx, it.d, nil)
	if ctx.Err() != nil {
		return ""
	}
	reason2, missing := judge(it, blob2, err2, dec)
	if reason2 == "" {
		j.Logf("chunk %s: first read failed (%s), second read ok", it.d, reason)
		v.passed(j, it, len(blob2))
		return ""
	}
	v.condemn(j, it, reason2, missing)
	return reason2
}

// judge checks a blob: crypt mode and CRC; unless encrypted, that it
// decodes to data of the digest and size the index names. Each byte is
// read by one CRC pass and one hash; a plain blob's payload is hashed in
// place.
func judge(it *item, blob []byte, rerr error, dec *[]byte) (reason string, missing bool) {
	if rerr != nil {
		if errors.Is(rerr, store.ErrMissingChunk) {
			return "missing", true
		}
		return fmt.Sprintf("read error: %v", rerr), false
	}
	kind, err := chunk.BlobKind(blob)
	if err != nil {
		return err.Error(), false
	}
	if kind.Encrypted() != it.encrypted {
		return fmt.Sprintf("blob is %s but the index's crypt mode says otherwise", kind), false
	}
	switch kind {
	case chunk.KindPlain:
		if _, err := chunk.CheckCRC(blob); err != nil {
			return err.Error(), false
		}
		data := blob[chunk.BlobHeaderSize:]
		if int64(len(data)) != it.size {
			return fmt.Sprintf("%v: %d bytes, index says %d", chunk.ErrCorrupt, len(data), it.size), false
		}
		if got := chunk.Sum(data); got != it.d {
			return fmt.Sprintf("%v: data hashes to %s", chunk.ErrDigest, got), false
		}
	case chunk.KindZstd:
		out, err := chunk.DecodeChunk(*dec, blob, it.d, int(it.size))
		*dec = out
		if err != nil {
			return err.Error(), false
		}
	default: // encrypted: the CRC is all that can be checked without the key
		if _, err := chunk.CheckCRC(blob); err != nil {
			return err.Error(), false
		}
	}
	return "", false
}

func (v *verifier) passed(j *Job, it *item, stored int) {
	v.mu.Lock()
	v.chunks[it.d] = chunkOK
	v.mu.Unlock()
	v.count(j, it, stored)
}

func (v *verifier) count(j *Job, it *item, stored int) {
	v.verified.Add(1)
	v.bytes.Add(it.size)
	v.storedBytes.Add(int64(stored))
	j.AddDone(1, it.size)
}

// condemn renames a bad chunk aside (a missing one has nothing to
// rename) and records it.
func (v *verifier) condemn(j *Job, it *item, reason string, missing bool) {
	var badPath string
	if !missing {
		p, err := v.s.MarkBad(it.d)
		if err != nil {
			j.Errorf("chunk %s: %s; moving it aside failed: %v", it.d, reason, err)
		} else {
			badPath = p
			j.Logf("chunk %s: %s; moved to %s", it.d, reason, p)
		}
	}
	v.mu.Lock()
	v.chunks[it.d] = chunkBad
	v.corrupt[it.d] = len(v.rep.Corrupt)
	v.rep.Corrupt = append(v.rep.Corrupt, CorruptChunk{Digest: it.d.String(), Reason: reason, BadPath: badPath,
		Snapshots: []string{}})
	v.rep.ChunksCorrupt++
	v.mu.Unlock()
	v.count(j, it, 0)
}
