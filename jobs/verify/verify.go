package verify

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/index"
)

// Kind is the verify job: it checks snapshots' manifests, blobs,
// indexes and every chunk they use, and records the result in each
// manifest's verify_state.
type Kind struct {
	// Sysfs is where chunk-order=auto reads sysfs (default /sys).
	Sysfs string
}

var (
	_ jobs.Kind     = Kind{}
	_ jobs.Work     = (*verifier)(nil)
	_ jobs.Reporter = (*verifier)(nil)
)

// Name implements jobs.Kind.
func (Kind) Name() string { return "verify" }

// New implements jobs.Kind.
func (k Kind) New(s *store.Store, params map[string]string) (jobs.Work, error) {
	opt, err := ParseParams(params)
	if err != nil {
		return nil, err
	}
	return newVerifier(s, opt, k.Sysfs), nil
}

// chunkState is what a verify job knows of a chunk.
type chunkState uint8

const (
	chunkPlanned chunkState = iota + 1
	chunkOK
	chunkBad
)

// chunkInfo is what a verify job knows of a chunk: its state and, once
// it passed, what its content says it is. Indexes are compared with that.
type chunkInfo struct {
	state chunkState
	facts chunkFacts
}

// chunkFacts is what a good chunk's own content says of it.
type chunkFacts struct {
	encrypted bool
	keyed     bool  // encrypted, decrypted with the key and its keyed digest checked
	zstd      bool  // compressed (of an encrypted chunk: known without the key)
	size      int32 // plain bytes; -1 when encrypted and checked without the key
	payload   int32 // of an encrypted chunk: bytes of ciphertext
}

// verifier is one verify job's work.
type verifier struct {
	s     *store.Store
	opt   Options
	sysfs string
	// read loads a chunk's blob into buf, from the disk (O_DIRECT where
	// possible: what is verified is what is stored, and the page cache
	// the mount relies on is left alone); tests replace it.
	read func(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error)

	chunks      map[chunkRef]chunkInfo // written by Run's goroutine and, under mu, the verify pool
	keys        []*crypt.Key           // of the snapshots verified, numbered by keyRef; under mu
	bytes       atomic.Int64
	storedBytes atomic.Int64
	verified    atomic.Int64
	decrypted   atomic.Int64 // encrypted chunks decrypted and their keyed digest checked
	withoutKey  atomic.Int64 // encrypted chunks checked without their key (CRC, size)

	mu      sync.Mutex
	rep     Report
	corrupt map[chunk.Digest]int // index into rep.Corrupt
}

func newVerifier(s *store.Store, opt Options, sysfs string) *verifier {
	if sysfs == "" {
		sysfs = jobs.DefaultSysfs
	}
	v := &verifier{s: s, opt: opt, sysfs: sysfs, chunks: map[chunkRef]chunkInfo{},
		corrupt: map[chunk.Digest]int{}}
	v.rep = Report{ChunkOrder: opt.ChunkOrder, ReadThreads: opt.ReadThreads, VerifyThreads: opt.VerifyThreads,
		Snapshots: []SnapshotResult{}, Corrupt: []CorruptChunk{}}
	v.read = func(ctx context.Context, d chunk.Digest, buf []byte) ([]byte, error) {
		b, err := s.ReadChunk(ctx, d, store.ChunkOptions{Buf: buf, Direct: store.DirectAlways})
		return b.Bytes(), err
	}
	return v
}

// Report implements jobs.Reporter.
func (v *verifier) Report() any {
	v.mu.Lock()
	defer v.mu.Unlock()
	r := v.rep.clone()
	v.totals(&r)
	return r
}

// Run implements jobs.Work.
func (v *verifier) Run(ctx context.Context, j *jobs.Job) error {
	start := time.Now()
	defer j.SetPhase("done")
	defer v.finish(ctx, start)
	// Each snapshot is held locked (shared) while it is verified
	// (verifySnapshot): forget and prune refuse it meanwhile, and garbage
	// collection, which marks every snapshot still there, keeps its
	// chunks.
	j.SetPhase("selecting")
	snaps, err := v.selectSnapshots(ctx, j)
	if err != nil {
		return err
	}
	order := v.chooseOrder(j)
	j.SetPhase("planning")
	items, bytes := v.plan(ctx, snaps)
	j.SetTotals(items, bytes)
	j.Logf("verifying %d snapshot(s): %d chunks, %d bytes; chunk order %s, %d read and %d verify threads",
		len(snaps), items, bytes, order, v.opt.ReadThreads, v.opt.VerifyThreads)
	j.SetPhase("verifying")
	for i, snap := range snaps {
		if ctx.Err() != nil {
			break
		}
		j.SetPhase(fmt.Sprintf("verifying %d/%d %s", i+1, len(snaps), snap))
		v.verifySnapshot(ctx, j, snap, order)
	}
	return ctx.Err()
}

// finish completes the report's totals and next steps.
func (v *verifier) finish(ctx context.Context, start time.Time) {
	el := time.Since(start)
	v.mu.Lock()
	defer v.mu.Unlock()
	r := &v.rep
	v.totals(r)
	r.Seconds = el.Seconds()
	r.MBps = float64(r.StoredBytes) / 1e6 / max(r.Seconds, 1e-9)
	r.PlainMBps = float64(r.Bytes) / 1e6 / max(r.Seconds, 1e-9)
	r.Next = r.nextSteps(ctx.Err() != nil)
}

func (v *verifier) totals(r *Report) {
	r.Chunks, r.Bytes, r.StoredBytes = v.verified.Load(), v.bytes.Load(), v.storedBytes.Load()
	r.ChunksDecrypted, r.ChunksWithoutKey = v.decrypted.Load(), v.withoutKey.Load()
}

// selectSnapshots lists the finished snapshots to verify: the explicit
// ones, or those of the namespace tree with groups sorted and snapshots
// newest first, less those the ignore-verified filter skips.
func (v *verifier) selectSnapshots(ctx context.Context, j *jobs.Job) ([]store.Snapshot, error) {
	sel := v.opt.Selector
	sel.NewestFirst = true
	all, errs, err := v.selectFinished(ctx, j, sel)
	if err != nil {
		return nil, err
	}
	defer func() {
		v.mu.Lock()
		v.rep.NothingToVerify = errs == 0 && v.rep.SnapshotsSkipped == len(all)
		v.mu.Unlock()
	}()
	out := all[:0]
	for _, snap := range all {
		if why, skip := v.skip(snap); skip {
			j.Logf("%s: skipped, %s", snap, why)
			v.mu.Lock()
			v.rep.SnapshotsSkipped++
			v.mu.Unlock()
			continue
		}
		out = append(out, snap)
	}
	return out, nil
}

// selectFinished walks sel: finished snapshots are returned, unfinished
// ones (a selection's walk or an explicit reference that has no manifest
// yet) are counted and logged, not verified, and not an error; errs
// counts the other errors met.
func (v *verifier) selectFinished(ctx context.Context, j *jobs.Job, sel store.Selector) (out []store.Snapshot, errs int, _ error) {
	for si, err := range v.s.Walk(ctx, sel) {
		switch {
		case ctx.Err() != nil:
			return nil, errs, ctx.Err()
		case errors.Is(err, store.ErrUnfinished) || (err == nil && !si.Finished):
			if err == nil {
				err = fmt.Errorf("%s: %w", si.Snapshot, store.ErrUnfinished)
			}
			j.Logf("%v, not verified", err)
			v.mu.Lock()
			v.rep.SnapshotsUnfinished++
			v.mu.Unlock()
		case err != nil:
			j.Errorf("%v", err)
			errs++
		default:
			out = append(out, si.Snapshot)
		}
	}
	return out, errs, nil
}

// skip applies ignore-verified and outdated-after.
func (v *verifier) skip(snap store.Snapshot) (string, bool) {
	if !v.opt.IgnoreVerified {
		return "", false
	}
	m, err := v.s.ReadManifest(snap)
	if err != nil {
		return "", false // verifying it will report why
	}
	vs, ok := m.VerifyState()
	if !ok || vs.State != SnapOK {
		return "", false
	}
	if v.opt.OutdatedAfter < 0 {
		return "verified ok before (" + vs.UPID + ")", true
	}
	u, err := jobs.ParseUPID(vs.UPID)
	if err != nil {
		return "", false // unknown age: verify again
	}
	age := time.Since(u.Start)
	if v.opt.OutdatedAfter > 0 && age <= time.Duration(v.opt.OutdatedAfter)*24*time.Hour {
		return fmt.Sprintf("verified ok %s ago", age.Round(time.Minute)), true
	}
	return "", false
}

// chooseOrder resolves chunk-order=auto from the store's disk.
func (v *verifier) chooseOrder(j *jobs.Job) string {
	order, why := jobs.ChunkOrder(v.opt.ChunkOrder, v.sysfs, v.s)
	if v.opt.ChunkOrder == jobs.OrderAuto {
		j.Logf("chunk-order=auto: %s", why)
	}
	v.mu.Lock()
	v.rep.ChunkOrder, v.rep.ChunkOrderReason = order, why
	v.mu.Unlock()
	return order
}

// plan counts the distinct chunks and their bytes for progress.
// Indexes that fail to open are left for verifySnapshot to report.
func (v *verifier) plan(ctx context.Context, snaps []store.Snapshot) (items, bytes int64) {
	for _, snap := range snaps {
		if ctx.Err() != nil {
			return
		}
		m, err := v.s.ReadManifest(snap)
		if err != nil {
			continue
		}
		ref := v.snapshotKey(snap, m).ref
		for _, f := range m.Files {
			if _, ok := index.Kind(f.Filename); !ok || ctx.Err() != nil {
				continue
			}
			x, err := v.s.OpenIndexFile(snap, f.Filename)
			if err != nil {
				continue
			}
			for i := 0; i < x.Len(); i++ {
				d, start, end := x.Chunk(i)
				if _, seen := v.chunks[chunkRef{d, ref}]; !seen {
					v.chunks[chunkRef{d, ref}] = chunkInfo{state: chunkPlanned}
					items++
					bytes += end - start
				}
			}
			x.Close()
		}
	}
	return items, bytes
}

// addResult appends a snapshot's result to the report.
func (v *verifier) addResult(r SnapshotResult) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.rep.Snapshots = append(v.rep.Snapshots, r)
	if r.State == SnapOK {
		v.rep.SnapshotsOK++
	} else {
		v.rep.SnapshotsFailed++
	}
}

// writeState records the result in the snapshot's manifest. It runs even
// after cancellation (a bounded wait for the manifest lock): the result
// is complete, and the write replaces the manifest atomically.
func (v *verifier) writeState(ctx context.Context, j *jobs.Job, snap store.Snapshot, state string) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := v.s.UpdateManifest(wctx, snap, func(m *store.Manifest) error {
		m.SetVerifyState(store.VerifyState{State: state, UPID: j.ID()})
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrUnfinished) {
			j.Logf("%s: removed while being verified", snap)
			return
		}
		j.Errorf("%s: record verify state %s: %v", snap, state, err)
	}
}
