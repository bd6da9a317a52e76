package verify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// badChunk is a chunk judged corrupt or missing, or (index set) a good
// chunk the index or manifest describes wrongly: that fails the snapshot
// and leaves the chunk in place.
type badChunk struct {
	it     item
	reason string
	index  bool
}

// loaded is a chunk read by the read pool for the verify pool.
type loaded struct {
	i    int
	blob []byte
	err  error
}

// verifyChunks reads items in order on read-threads goroutines and checks
// them on verify-threads goroutines, connected by bounded channels, so at
// most read-threads + max(read-threads, 2) + verify-threads blobs are in
// memory (a longer queue would only hold more buffers, each one new
// memory). It returns the chunks judged bad; on cancellation it stops
// within a chunk or two per worker.
func (v *verifier) verifyChunks(ctx context.Context, j *jobs.Job, items []item) []badChunk {
	if len(items) == 0 {
		return nil
	}
	feed := make(chan int, v.opt.ReadThreads)
	out := make(chan loaded, max(v.opt.ReadThreads, 2))
	decCap := decodeCap(items)
	bufs := newBlobBufs(v.opt.ReadThreads+cap(out)+v.opt.VerifyThreads, blobCap(decCap))
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
				b, err := v.read(ctx, items[i].d, bufs.get())
				select {
				case out <- loaded{i: i, blob: b, err: err}:
				case <-ctx.Done():
					bufs.put(b)
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
				if dec == nil {
					dec = make([]byte, 0, decCap)
				}
				if ctx.Err() == nil {
					if b, ok := v.checkChunk(ctx, j, &items[l.i], l.blob, l.err, &dec); ok {
						mu.Lock()
						bad = append(bad, b)
						mu.Unlock()
					}
				}
				bufs.put(l.blob)
			}
		})
	}
	verifiers.Wait()
	slices.SortFunc(bad, func(a, b badChunk) int { return slices.Compare(a.it.d[:], b.it.d[:]) })
	return bad
}

// checkChunk judges one chunk by its own content; a chunk that fails is
// read once more before it is condemned, renamed aside and recorded. A
// good chunk the item describes wrongly (size, crypt mode) is reported
// with index set and left alone: other snapshots may use it rightly.
// ok is false when there is nothing to report.
func (v *verifier) checkChunk(ctx context.Context, j *jobs.Job, it *item, blob []byte, rerr error, dec *[]byte) (b badChunk, ok bool) {
	facts, reason, _ := judge(it.d, blob, rerr, dec, it.key)
	if reason == "" {
		return v.passed(j, it, facts, len(blob))
	}
	if ctx.Err() != nil {
		return b, false // cancelled: judge nothing
	}
	blob2, err2 := v.read(ctx, it.d, nil)
	if ctx.Err() != nil {
		return b, false
	}
	facts, reason2, missing := judge(it.d, blob2, err2, dec, it.key)
	if reason2 == "" {
		j.Logf("chunk %s: first read failed (%s), second read ok", it.d, reason)
		return v.passed(j, it, facts, len(blob2))
	}
	if b, ok := v.elsewhere(it, blob2, dec); ok {
		v.count(j, it, len(blob2))
		return b, true
	}
	v.condemn(j, it, reason2, missing)
	return badChunk{it: *it, reason: reason2}, true
}

// judge checks a blob by its content alone: CRC and, unless encrypted,
// that it decodes to data of digest d; an encrypted one with key is
// decrypted and its data must hash to d by the keyed digest, without
// key it is checked by CRC and structure only. It returns what the
// content says of the chunk; what an index says of it is compared by
// disagreement. Each byte is read by one CRC pass and one hash; a plain
// blob's payload is hashed in place.
func judge(d chunk.Digest, blob []byte, rerr error, dec *[]byte, key *crypt.Key) (f chunkFacts, reason string, missing bool) {
	if rerr != nil {
		if errors.Is(rerr, store.ErrMissingChunk) {
			return f, "missing", true
		}
		return f, fmt.Sprintf("read error: %v", rerr), false
	}
	kind, err := chunk.BlobKind(blob)
	if err != nil {
		return f, err.Error(), false
	}
	f.encrypted, f.zstd, f.size = kind.Encrypted(), kind == chunk.KindZstd || kind == chunk.KindEncryptedZstd, -1
	switch {
	case kind == chunk.KindPlain:
		if _, err := chunk.CheckCRC(blob); err != nil {
			return f, err.Error(), false
		}
		data := blob[chunk.BlobHeaderSize:]
		if got := chunk.Sum(data); got != d {
			return f, fmt.Sprintf("%v: data hashes to %s", chunk.ErrDigest, got), false
		}
		f.size = int32(len(data))
	case kind == chunk.KindZstd || key != nil:
		out, err := chunk.DecodeChunkKey(*dec, blob, d, -1, key)
		*dec = out
		if err != nil {
			return f, err.Error(), false
		}
		if f.size, f.keyed = int32(len(out)), f.encrypted; f.keyed {
			clear(out) // decrypted data does not linger in the buffer
		}
	default: // encrypted, without its key: CRC and structure, as PBS
		if _, err := chunk.CheckCRC(blob); err != nil {
			return f, err.Error(), false
		}
		n, err := chunk.EncryptedPayloadSize(blob)
		if err != nil {
			return f, err.Error(), false
		}
		f.payload = int32(n)
	}
	return f, "", false
}

// disagreement says how an index entry (it) contradicts a good chunk's
// content, or "" when it does not.
func disagreement(it *item, f chunkFacts) string {
	if msg := encryptedSizeNote(it, f); msg != "" {
		return msg
	}
	switch {
	case f.encrypted != it.encrypted:
		return fmt.Sprintf("index %s: the manifest's crypt mode says chunk %s is%s encrypted, but it is%s; "+
			"the chunk is good and stays in place", it.file, it.d, notWord(it.encrypted), notWord(f.encrypted))
	case f.size >= 0 && int64(f.size) != it.size:
		return fmt.Sprintf("index %s: %v: chunk %s holds %d bytes, the index says %d; the chunk is good and stays in place",
			it.file, chunkcache.ErrSizeMismatch, it.d, f.size, it.size)
	}
	return ""
}

func notWord(yes bool) string {
	if yes {
		return ""
	}
	return " not"
}

// passed records a good chunk and reports how the item contradicts it.
func (v *verifier) passed(j *jobs.Job, it *item, f chunkFacts, stored int) (badChunk, bool) {
	v.mu.Lock()
	v.chunks[chunkRef{it.d, it.kref}] = chunkInfo{state: chunkOK, facts: f}
	v.mu.Unlock()
	v.count(j, it, stored)
	switch {
	case f.keyed:
		v.decrypted.Add(1)
	case f.encrypted:
		v.withoutKey.Add(1)
	}
	if msg := disagreement(it, f); msg != "" {
		return badChunk{it: *it, reason: msg, index: true}, true
	}
	return badChunk{}, false
}

func (v *verifier) count(j *jobs.Job, it *item, stored int) {
	v.verified.Add(1)
	v.bytes.Add(it.size)
	v.storedBytes.Add(int64(stored))
	j.AddDone(1, it.size)
}

// condemn renames a bad chunk aside (a missing one has nothing to
// rename) and records it.
func (v *verifier) condemn(j *jobs.Job, it *item, reason string, missing bool) {
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
	v.chunks[chunkRef{it.d, it.kref}] = chunkInfo{state: chunkBad}
	v.corrupt[it.d] = len(v.rep.Corrupt)
	v.rep.Corrupt = append(v.rep.Corrupt, CorruptChunk{Digest: it.d.String(), Reason: reason, BadPath: badPath,
		Snapshots: []string{}})
	v.rep.ChunksCorrupt++
	v.mu.Unlock()
	v.count(j, it, 0)
}
