package s3store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/internal/printable"
	"github.com/cairnfs/cairn/store/objstore"
)

// Leases in the bucket (rules 1 and 3 of the safety protocol, docs/design/store.md): a
// remote store's writer holds .cairn/leases/writers/<random> for its
// whole life, naming its base snapshots in the lease's data, and a backup
// holds its group's lease .cairn/leases/groups/<group> beside the local
// flock. A lease is renewed by objstore in the background; when its
// renewals fail for half its TTL, Lost is closed and its holder stops
// (a backup fails before its manifest).

// defaultLeaseTTL is how long a lease lives without a renewal.
const defaultLeaseTTL = objstore.DefaultLeaseTTL

// leaseReleaseTimeout bounds the release of a lease when its holder ends.
const leaseReleaseTimeout = 30 * time.Second

// leaseSet is what a remote store keeps of its leases: the TTL of new
// ones (tests shorten it).
type leaseSet struct {
	mu  sync.Mutex
	ttl time.Duration // 0: defaultLeaseTTL
}

func (r *remote) leaseTTL() time.Duration {
	r.leases.mu.Lock()
	defer r.leases.mu.Unlock()
	if r.leases.ttl > 0 {
		return r.leases.ttl
	}
	return defaultLeaseTTL
}

// holder describes this process for a lease (data: the holder's payload).
func holder(data []byte) objstore.Holder {
	host, _ := os.Hostname()
	me := store.DescribeProcess(os.Getpid())
	return objstore.Holder{Host: host, PID: me.PID, Command: me.Command, Data: data}
}

// writerData is a writer lease's Holder.Data: the snapshots (as
// Snapshot.String names them) whose indexes the writer takes as present,
// one per archive at most (backup_ref.go). Base is the first of them, as
// a cairn that knew one base only wrote and reads it; Bases all of them.
type writerData struct {
	Base  string   `json:"base,omitempty"`
	Bases []string `json:"bases,omitempty"`
}

// acquireWriter takes a new writer lease (rule 1) and adds it to the
// writer registry (registry.go) before the writer looks at any
// chunk.
func (r *remote) acquireWriter(ctx context.Context) (*objstore.Lease, error) {
	var rnd [16]byte
	rand.Read(rnd[:])
	key := writerLeasesPrefix + hex.EncodeToString(rnd[:])
	l, err := objstore.Acquire(ctx, r.bucket, key, holder([]byte("{}")), r.leaseTTL(), 0)
	if err != nil {
		return nil, fmt.Errorf("register writer: lease %s: %w", key, err)
	}
	if err := r.register(ctx, key); err != nil {
		l.ReleaseWithin(leaseReleaseTimeout)
		return nil, fmt.Errorf("register writer %s: %w", key, err)
	}
	return l, nil
}

// releaseWriter ends a writer lease: its registry entry first, then the
// lease (an entry whose lease is gone is dropped by the next reader).
// A registry entry that cannot be dropped is the error (the next GC
// drops it); the lease is released all the same.
func (r *remote) releaseWriter(ctx context.Context, l *objstore.Lease) error {
	ctx, cancel := context.WithTimeout(ctx, leaseReleaseTimeout)
	defer cancel()
	err := r.unregister(ctx, l.Key())
	l.ReleaseWithin(leaseReleaseTimeout)
	return err
}

// liveWriters is every writer lease in the bucket that has not expired,
// by the server's clock: those of the registry (read by key, proven
// current: registry.go) and those a listing of the writer leases
// shows (writers of a cairn that had no registry).
func (r *remote) liveWriters(ctx context.Context) ([]objstore.LeaseInfo, error) {
	live, _, err := r.registeredWriters(ctx)
	if err != nil {
		return nil, err
	}
	all, err := objstore.Leases(ctx, r.bucket, writerLeasesPrefix)
	if err != nil {
		return nil, fmt.Errorf("list writer leases: %w", err)
	}
	for _, l := range all {
		if !l.Expired && !slices.ContainsFunc(live, func(x objstore.LeaseInfo) bool { return x.Key == l.Key }) {
			live = append(live, l)
		}
	}
	return live, nil
}

// leaseBases reads the base snapshots a writer lease names (none for
// data that is not a writer's).
func leaseBases(l objstore.LeaseInfo) []string {
	var d writerData
	if json.Unmarshal(l.Holder.Data, &d) != nil {
		return nil
	}
	if d.Base != "" && !slices.Contains(d.Bases, d.Base) {
		return append(d.Bases, d.Base)
	}
	return d.Bases
}

// setBases names bases in the writer's lease l, then checks that check's
// manifest (nil: none to check) is still in the bucket (rule 3): false
// means it is gone (a forget deleted it) and the writer must not build
// on it.
func (r *remote) setBases(ctx context.Context, l *objstore.Lease, bases []store.Snapshot, check *store.Snapshot) (bool, error) {
	if l == nil {
		return true, nil
	}
	var d writerData
	for _, b := range bases {
		d.Bases = append(d.Bases, b.String())
	}
	if len(d.Bases) > 0 {
		d.Base = d.Bases[0]
	}
	data, _ := json.Marshal(d) // a struct of strings always marshals
	if err := l.Update(ctx, data); err != nil {
		return false, fmt.Errorf("writer lease: name bases %q: %w", d.Bases, err)
	}
	if check == nil {
		return true, nil
	}
	there, err := r.manifestThere(ctx, *check)
	if err != nil {
		return false, fmt.Errorf("base %s: %w", check, err)
	}
	return there, nil
}

// lockGroupLease takes g's lease in the bucket, waiting up to the store's
// lock wait while another host's backup has it; then a *LockedError names
// that holder.
func (s *rstore) lockGroupLease(ctx context.Context, g store.Group) (*objstore.Lease, error) {
	key := groupLeasesPrefix + g.String()
	start := time.Now()
	l, err := objstore.Acquire(ctx, s.remote.bucket, key, holder(nil), s.remote.leaseTTL(), s.LockWait())
	var held *objstore.HeldError
	if errors.As(err, &held) {
		h := held.Holder
		return nil, &store.LockedError{Path: "bucket " + s.remote.cfg.Bucket + ": " + key,
			Holders: []store.LockHolder{{Host: printable.String(h.Host, printable.MaxCommand), PID: h.PID,
				Command: printable.String(h.Command, printable.MaxCommand), Started: h.Start}},
			Waited: waited(start, s.LockWait())}
	}
	if err != nil {
		return nil, fmt.Errorf("group %s: lease %s: %w", g, key, err)
	}
	return l, nil
}

func waited(start time.Time, wait time.Duration) time.Duration {
	if wait == 0 {
		return 0
	}
	return time.Since(start)
}

// leaseLost returns an error naming the first of leases whose renewals
// failed (nil when all are held).
func leaseLost(leases ...*objstore.Lease) error {
	for _, l := range leases {
		if l == nil {
			continue
		}
		select {
		case <-l.Lost():
			return fmt.Errorf("%w: its lease in the bucket was lost (renewals failed)", ErrLeaseLost)
		default:
		}
	}
	return nil
}

// ErrLeaseLost is a writer's or a group's lease found lost: the holder
// stopped (a backup fails, writing no manifest).
var ErrLeaseLost = errors.New("lease lost")

// leaseContext derives a context from ctx that is cancelled (cause:
// ErrLeaseLost) as soon as one of leases is lost; stop releases it.
func leaseContext(ctx context.Context, leases ...*objstore.Lease) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	for _, l := range leases {
		if l == nil {
			continue
		}
		lost := l.Lost()
		go func() {
			select {
			case <-lost:
				cancel(leaseLost(l))
			case <-ctx.Done():
			}
		}()
	}
	return ctx, func() { cancel(context.Canceled) }
}

// testHookNameBase, set by tests, runs as a backup is about to name a
// base in its lease: after the group's refresh and the base's pick.
var testHookNameBase func(b *store.Backup, base store.Snapshot)

// nameBase, on a remote store, names base in the writer's lease beside
// the bases held already and then tells whether base's manifest is
// still in the bucket; when gone, the lease is set back to the others
// (rule 3: either a forget of base sees this lease, or this HEAD, made
// after the lease names base, sees the forget).
func (s *rstore) nameBase(ctx context.Context, b *store.Backup, held []store.Snapshot, base store.Snapshot) (bool, error) {
	if testHookNameBase != nil {
		testHookNameBase(b, base)
	}
	ok, err := s.remote.setBases(ctx, b.WriterLease(), append(slices.Clone(held), base), &base)
	if err != nil {
		return false, err
	}
	if !ok {
		s.remote.bucket.Logger().Info("base snapshot forgotten in the bucket: not building on it", "snapshot", b.Snapshot(), "base", base)
		if _, err := s.remote.setBases(ctx, b.WriterLease(), held, nil); err != nil {
			return false, err
		}
	}
	return ok, nil
}
