package s3store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/cairnfs/cairn/store/objstore"
)

// How a chunk is stored (rule 2, docs/design/store.md): with one
// conditional PUT (If-None-Match: *) and no HEAD first, where the server
// decides such a write against what it holds, as AWS S3 and MinIO do.
// Refused (412), the chunk is there and is kept as a reused one is
// (chunks.go: keepExisting). Whether the server honours the condition is
// found out once per store open, before the first chunk is written, by a
// probe: an object created twice under the condition, whose second
// write must be refused. A server that refuses the header (501
// NotImplemented) or ignores it (the second write succeeds) is told once
// at INFO, and its chunks are looked for with a HEAD before they are
// written, the write then followed by the sweep record's check as any
// write over an object that may be old is (replace): an ignored
// condition could not tell a new object from an old one a running sweep
// listed.
//
// A PUT of a chunk the bucket has costs its upload: when most recent
// chunks turned out to be there (a backup of data the bucket holds
// under another group), the writer looks first again (LookFirst), which
// costs the same requests and no upload.

// condMode is what a server does with a conditional create.
type condMode int32

const (
	condUnknown  condMode = iota // not probed yet
	condHonoured                 // decided against the object: the write is refused when it exists
	condRefused                  // refused (501 NotImplemented)
	condIgnored                  // the object is written over
)

func (m condMode) String() string {
	return [...]string{"unknown", "honoured", "refused", "ignored"}[m]
}

// condProbePrefix holds the probe's objects (deleted after the probe).
const condProbePrefix = ".cairn/probe/"

// condState is a store's knowledge of its server's conditional creates
// and of how often its chunks were there already.
type condState struct {
	mu   sync.Mutex // held while probing
	mode atomic.Int32
	// existed is the recent share of chunks found in the bucket when
	// stored or looked for, in 1/65536 (a moving average over about 16
	// chunks)
	existed atomic.Int64
}

// condMode tells how the server treats a conditional create, probing it
// the first time.
func (r *remote) condMode(ctx context.Context) (condMode, error) {
	if m := condMode(r.cond.mode.Load()); m != condUnknown {
		return m, nil
	}
	r.cond.mu.Lock()
	defer r.cond.mu.Unlock()
	if m := condMode(r.cond.mode.Load()); m != condUnknown {
		return m, nil
	}
	m, err := r.probeCond(ctx)
	if err != nil {
		return m, fmt.Errorf("bucket %s: probe of conditional writes: %w", r.cfg.Bucket, err)
	}
	r.setCondMode(m)
	return m, nil
}

// setCondMode records m, telling (once) of a server that does not
// honour conditional creates.
func (r *remote) setCondMode(m condMode) {
	if condMode(r.cond.mode.Swap(int32(m))) == m || m == condHonoured {
		return
	}
	r.bucket.Logger().Info("the bucket's server does not honour conditional writes (If-None-Match): each chunk is looked for (HEAD) before it is stored",
		"bucket", r.cfg.Bucket, "conditional_writes", m.String())
}

// probeCond creates a probe object twice under If-None-Match: *.
func (r *remote) probeCond(ctx context.Context) (condMode, error) {
	var rnd [12]byte
	rand.Read(rnd[:])
	key := condProbePrefix + hex.EncodeToString(rnd[:])
	body := []byte("cairn: probe of conditional writes\n")
	defer r.bucket.Delete(context.WithoutCancel(ctx), key) //nolint:errcheck // best effort: a leftover is a small object under .cairn/
	for try := range 2 {
		_, err := r.bucket.Put(ctx, key, objstore.Cond{IfAbsent: true}, body)
		switch {
		case errors.Is(err, objstore.ErrNotImplemented):
			return condRefused, nil
		case errors.Is(err, objstore.ErrPrecondition):
			// the second write, or a retried first one that landed
			return condHonoured, nil
		case err != nil:
			return condUnknown, err
		case try == 1:
			return condIgnored, nil
		}
	}
	return condUnknown, errors.New("unreachable") // the loop returns
}

// sawChunk records whether a chunk stored or looked for was in the
// bucket already.
func (r *remote) sawChunk(existed bool) {
	x := int64(0)
	if existed {
		x = 1 << 16
	}
	for {
		old := r.cond.existed.Load()
		if r.cond.existed.CompareAndSwap(old, old+(x-old)/16) {
			return
		}
	}
}

// LookFirst implements store.Prober: a chunk no base snapshot has is
// looked for before it is stored when the server's conditional creates
// cannot be used, or when most recent chunks were in the bucket already.
func (c *remoteChunks) LookFirst() bool {
	m := condMode(c.r.cond.mode.Load())
	return m == condRefused || m == condIgnored || c.r.cond.existed.Load() > 1<<15
}
