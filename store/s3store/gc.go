package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/digestsort"
	"github.com/cairnfs/cairn/store/index"
	"github.com/cairnfs/cairn/store/objstore"
)

// Garbage collection of a remote store (the ChunkCollector of a store
// whose chunks live in a bucket; rule 4 of the bucket's protocol). There
// are no atimes in a bucket: a chunk object's age is its LastModified,
// the server's time of its upload or of its last Touch (a copy onto
// itself), and the mark is a set of digests, not a touch.
//
//  1. Begin takes the GC lease (gcLeaseKey; one GC per bucket across
//     hosts, besides the local LockJob("gc") of each store directory);
//     S is the lease's server creation time. It then reads the writer
//     registry (registry.go: proven current by a conditional
//     write, each lease read by its key; a listing of writerLeasesPrefix
//     adds writers of an older cairn) and takes the oldest start W of
//     those not expired, then refreshes the snapshot mirror from the bucket
//     (Store.Refresh; a refused key that may be an index stops the GC)
//     and marks the index objects the mirror does not hold as they are
//     in the bucket (gc_indexes.go: unfinished snapshots).
//     cutoff = min(S, W) − atime-cutoff, and no later than W −
//     GCWriterMargin (PBS's margin, for an object store whose nodes'
//     clocks differ a little).
//  2. Mark: jobs/gc reads every index of every snapshot of the mirror,
//     finished or not, and every digest goes into a sorted set on the
//     local disk (store/digestsort: an external sort, memory bounded).
//     The snapshots the writer registry names as published lately that
//     the mirror lacks (a listing that lags; published since the
//     refresh) are marked from their manifests and indexes read by key,
//     at Begin and again at EndMark (gc_recent.go).
//  3. EndMark sets the lease's data to {"phase":"sweep"} (GCPhaseSweep)
//     and the sweep record (gc_record.go) to "sweeping"; only
//     then does the sweep list anything. Close sets the record to
//     "ended" after the last delete, before the lease is released.
//  4. Sweep lists .chunks/ (key order is digest order) and walks the
//     marked set beside it: a chunk object not in the set whose
//     LastModified is before the cutoff is deleted (batches of
//     gcDeleteBatch keys); a marked digest with no object is a missing
//     chunk. Deletes are sent only while the lease is held.
//  5. Close releases the lease and removes the set.
//
// # Why a chunk in use is never deleted
//
// Every time compared is the server's: LastModified, and the leases'
// creation times (objstore reads them off the server too); no host's
// clock is compared with another's. Take a chunk C that a snapshot P
// needs after the GC, and a writer B of P (rules 1–2: B holds a writer
// lease from before it looks at any chunk to after P's manifest is in the
// bucket).
//
//   - P's manifest was in the bucket when Begin refreshed the mirror: its
//     indexes are marked, C is in the set, and the sweep keeps it. P
//     cannot vanish meanwhile and come back: forget (rule 3) deletes, it
//     never restores a snapshot, and one refused (a writer's base) keeps
//     its manifest.
//   - Otherwise P's manifest came later, so B's lease was live when Begin
//     read the writer registry (B added itself before looking at any
//     chunk; of B's registration and Begin's conditional write of the
//     registry, the second saw the first) (B released it after the manifest, and a
//     lease created after the listing has a start after S), or B started
//     after it: either way B.start ≥ W − 0 > cutoff, or B.start > S >
//     cutoff. B reuses C in one of three ways (rule 2):
//     (a) C is in the indexes of one of B's base snapshots (an archive's
//     reference: its lease names every one). Rule 3 keeps each in
//     the bucket while B's lease lives (forget sees B, or B sees the base
//     gone and drops it). A base that was there when Begin refreshed the
//     mirror is marked, C with it; one finished after the refresh is
//     itself a P of this argument, so its chunks, C among them, are
//     kept for the same reasons (induction on the time the snapshots
//     were finished).
//     (b) B uploaded C, or found it by HEAD with LastModified ≥ B.start:
//     C's LastModified ≥ B.start > cutoff, and LastModified only grows;
//     the sweep keeps C.
//     (c) B found C and Touched it (the answer showing a new time), then
//     read the GC lease and the sweep record. If the touch came before
//     the sweep listed C, the listing shows the new LastModified (≥
//     B.start > cutoff): kept. If it came after, the lease and the record
//     already said "sweep" (EndMark sets them before the listing
//     starts), so B waits until this GC's sweep has ended and stores C
//     again from its data (a PUT: LastModified new, after every delete
//     of this sweep).
//   - Unfinished snapshots (no manifest) are marked too, as PBS does,
//     though nothing needs them: a live writer's chunks are kept by the
//     cases above, and a dead writer never writes its manifest.
//   - A writer whose lease expired (its host died or lost the bucket) is
//     not counted in W: it must stop (Lease.Lost) and never writes a
//     manifest, so nothing it did is needed.
//
// The lease is this GC's fence: deletes are issued only while it is
// held (Lost not closed), and each batch's request is bounded by
// gcLeaseTTL/4, so a batch started before Lost (which closes when
// renewals failed for half the TTL) ends before the lease can expire and
// a writer of case (c) stop waiting. What no client of S3 can fence is
// a request the network delivers after the client gave it up; a batch
// is never retried after its deadline, and the next GC runs with a new
// lease.
//
// Killed at any point, a GC leaves its lease to expire (the next GC
// takes it over after gcLeaseTTL), its run files in the store directory
// (removed by the next GC on this host), and only deletions of garbage.
// Consistency: S3 (since 2020), MinIO and Ceph RGW list and read after a
// write consistently; an object store that does not cannot be collected
// safely by anyone.

// Phases of the GC lease's data ({"phase": ...}): writers that Touched a
// chunk older than their start wait while a GC sweeps (rule 2).
const (
	GCPhaseMark  = "mark"
	GCPhaseSweep = "sweep"
)

// gcLeaseTTL is the GC lease's time to live; it is renewed every TTL/5.
const gcLeaseTTL = objstore.DefaultLeaseTTL

// gcSortDirPrefix names the marked set's directory in the store's root.
const gcSortDirPrefix = ".gc-marks-"

type gcLeaseData struct {
	Phase string `json:"phase"`
}

// ParseGCPhase reads a GC lease's data (Holder.Data): GCPhaseMark,
// GCPhaseSweep, or "" when it says neither (no GC of cairn's wrote it).
func ParseGCPhase(data []byte) string {
	var d gcLeaseData
	if json.Unmarshal(data, &d) != nil {
		return ""
	}
	switch d.Phase {
	case GCPhaseMark, GCPhaseSweep:
		return d.Phase
	}
	return ""
}

// ErrGCLeaseLost: the GC lease could not be renewed; the GC stopped.
var ErrGCLeaseLost = errors.New("the GC lease was lost (renewals failed): stopped")

// remoteCollector is the ChunkCollector of a remote store.
type remoteCollector struct {
	s      *rstore
	b      objstore.Objects
	lease  *objstore.Lease
	start  store.GCStart
	dir    string // the marked set's directory
	set    *digestsort.Sorter
	marked *digestsort.Merge
	swept  bool // EndMark told writers the sweep begins
}

// Collector implements store.Collecting.
func (c *remoteChunks) Collector(s *store.Store) store.ChunkCollector {
	return &remoteCollector{s: of(s), b: c.r.bucket}
}

// Begin implements ChunkCollector (steps 1 of the remote GC).
func (c *remoteCollector) Begin(ctx context.Context, atimeCutoff time.Duration) (store.GCStart, error) {
	host, _ := os.Hostname()
	data, _ := json.Marshal(gcLeaseData{Phase: GCPhaseMark})
	l, err := objstore.Acquire(ctx, c.b, gcLeaseKey, objstore.Holder{Host: host, PID: os.Getpid(), Command: "gc", Data: data}, gcLeaseTTL, 0)
	if errors.Is(err, objstore.ErrHeld) {
		return store.GCStart{}, fmt.Errorf("bucket %s: another GC runs (%w): %w", c.s.remote.cfg.Bucket, store.ErrLocked, err)
	}
	if err != nil {
		return store.GCStart{}, fmt.Errorf("bucket %s: take the GC lease: %w", c.s.remote.cfg.Bucket, err)
	}
	c.lease = l
	if err := c.endDeadSweep(ctx); err != nil {
		return store.GCStart{}, err
	}
	st := store.GCStart{Phase1: l.Start()}
	if st.OldestWriter, err = c.oldestWriter(ctx); err != nil {
		return store.GCStart{}, err
	}
	note, err := c.refresh(ctx)
	if err != nil {
		return store.GCStart{}, err
	}
	if err := c.lost(); err != nil {
		return store.GCStart{}, err
	}
	if err := c.makeSet(); err != nil {
		return store.GCStart{}, err
	}
	extra, err := c.markBucketIndexes(ctx)
	if err != nil {
		return store.GCStart{}, err
	}
	if extra > 0 {
		note += fmt.Sprintf(" (and %d index(es) of unfinished snapshots read from the bucket)", extra)
	}
	recent, err := c.markRecent(ctx)
	if err != nil {
		return store.GCStart{}, err
	}
	if recent > 0 {
		note += fmt.Sprintf(" (and %d snapshot(s) the listing did not show yet, read by key)", recent)
	}
	st.Cutoff = store.GCCutoff(st.Phase1, atimeCutoff, st.OldestWriter)
	if w := st.OldestWriter; !w.IsZero() && w.Add(-atimeCutoff).Before(st.Cutoff) {
		st.Cutoff = w.Add(-atimeCutoff)
	}
	st.IndexFiles = int64(extra)
	st.Note = fmt.Sprintf("GC lease of bucket %s taken%s", c.s.remote.cfg.Bucket, note)
	c.start = st
	return st, nil
}

// oldestWriter is the oldest start of a live writer lease (zero: none).
// A lease whose start is unknown counts as started at the epoch: a GC
// that cannot bound a writer removes nothing older than it.
func (c *remoteCollector) oldestWriter(ctx context.Context) (time.Time, error) {
	leases, err := c.s.remote.liveWriters(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("running writers: %w", err)
	}
	var oldest time.Time
	for _, l := range leases {
		start := l.Holder.Start
		if start.IsZero() {
			start = time.Unix(0, 0)
		}
		if oldest.IsZero() || start.Before(oldest) {
			oldest = start
		}
	}
	return oldest, nil
}

// refresh brings the snapshot mirror up to date with the bucket
// (Store.Refresh). Keys it refused stop the GC when one may be an index
// (or cannot be told): a chunk only that index uses would look unused,
// as the local GC stops on an index it cannot read. Other refused keys
// (hostile names no reader reads) are passed over and named in note.
func (c *remoteCollector) refresh(ctx context.Context) (note string, err error) {
	for try := 0; ; try++ {
		// an object gone between the listing and its download is a
		// snapshot forgotten meanwhile: listing again settles it
		if err = c.s.Refresh(ctx); try == 2 || !errors.Is(err, objstore.ErrNotExist) {
			break
		}
	}
	var re *RefreshError
	if !errors.As(err, &re) {
		if err != nil {
			return "", fmt.Errorf("refresh the snapshots from the bucket: %w", err)
		}
		return "", nil
	}
	for _, r := range re.Refused {
		var ke *KeyError
		if !errors.As(r, &ke) || strings.HasSuffix(ke.Key, ".fidx") || strings.HasSuffix(ke.Key, ".didx") {
			return "", fmt.Errorf("%w: %w", index.ErrFormat, re)
		}
	}
	if re.More > 0 {
		return "", fmt.Errorf("%w: %w", index.ErrFormat, re)
	}
	return fmt.Sprintf(" (passed over: %v)", re), nil
}

// makeSet removes what killed GCs of this store directory left (this GC
// holds LockJob("gc")) and makes the marked set's directory.
func (c *remoteCollector) makeSet() error {
	old, _ := filepath.Glob(filepath.Join(c.s.root, gcSortDirPrefix+"*"))
	for _, d := range old {
		os.RemoveAll(d)
	}
	dir, err := os.MkdirTemp(c.s.root, gcSortDirPrefix)
	if err != nil {
		return fmt.Errorf("gc marked set: %w", err)
	}
	c.dir, c.set = dir, digestsort.New(dir)
	return nil
}

// lost is ErrGCLeaseLost once the lease is lost.
func (c *remoteCollector) lost() error {
	select {
	case <-c.lease.Lost():
		return fmt.Errorf("bucket %s: %w", c.s.remote.cfg.Bucket, ErrGCLeaseLost)
	default:
		return nil
	}
}

// MarkChunk implements ChunkCollector: d goes into the marked set.
func (c *remoteCollector) MarkChunk(_ context.Context, d chunk.Digest) error { return c.set.Add(d) }

// MarkMissing implements ChunkCollector: the sweep tells missing chunks.
func (c *remoteCollector) MarkMissing(chunk.Digest) (bool, error) { return false, nil }

// EndMark implements ChunkCollector: the set is sorted and the lease says
// the sweep begins (step 3).
func (c *remoteCollector) EndMark(ctx context.Context) error {
	// the snapshots published since Begin's refresh, which no listing
	// of this GC showed: their chunks are marked too (a touch whose
	// answer lied cannot make them look unused)
	if _, err := c.markRecent(ctx); err != nil {
		return err
	}
	m, err := c.set.Finish()
	if err != nil {
		return err
	}
	c.marked = m
	if err := c.lost(); err != nil {
		return err
	}
	data, _ := json.Marshal(gcLeaseData{Phase: GCPhaseSweep})
	if err := c.lease.Update(ctx, data); err != nil {
		return fmt.Errorf("bucket %s: set the GC lease's phase to sweep: %w", c.s.remote.cfg.Bucket, err)
	}
	c.swept = true
	return c.writeSweepRecord(ctx, sweepRunning)
}

// Close implements ChunkCollector: the lease is released and the set
// removed.
func (c *remoteCollector) Close() error {
	if c.marked != nil {
		c.marked.Close()
		c.marked = nil
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
		c.dir = ""
	}
	if c.lease == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if c.swept {
		// after the last delete, before the lease goes: writers that
		// touched a chunk during the sweep store it again
		if err := c.writeSweepRecord(ctx, sweepEnded); err != nil {
			c.s.remote.bucket.Logger().Warn("gc: the sweep record still says sweeping (writers take it as ended once the lease expires)", "err", err)
		}
	}
	err := c.lease.Release(ctx)
	c.lease = nil
	if err != nil {
		return fmt.Errorf("bucket %s: release the GC lease (it expires in %s): %w", c.s.remote.cfg.Bucket, gcLeaseTTL, err)
	}
	return nil
}

// parseChunkKey reads a key of the bucket's chunk listing:
// .chunks/XXXX/<digest> (bad false) or .chunks/XXXX/<digest>.N.bad (bad
// true). ok is false for any other key (never deleted).
func parseChunkKey(key string) (d chunk.Digest, bad, ok bool) {
	rest, found := strings.CutPrefix(key, chunkDir+"/")
	if !found || len(rest) < 5+64 || rest[4] != '/' {
		return d, false, false
	}
	name := rest[5:]
	switch store.EntryKindOf(name) {
	case store.EntryChunk:
	case store.EntryBad:
		bad = true
	default:
		return d, false, false
	}
	if name[:4] != rest[:4] {
		return d, false, false // a chunk under another prefix: not where readers look
	}
	d, err := chunk.ParseDigest(name[:64])
	return d, bad, err == nil
}
