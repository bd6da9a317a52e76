package objstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A lease object's body (JSON): who holds it, the holder's random token
// (to recognise its own writes, even one whose answer was lost), its TTL
// (so that others know when it expires), a renewal counter (every
// write changes the body, hence the ETag) and the writing process.
type leaseBody struct {
	Holder Holder `json:"holder"`
	Token  string `json:"token"`
	TTLMs  int64  `json:"ttl_ms"`
	Seq    uint64 `json:"seq"`
	// The writing process and its node (lease_local.go): a lease whose
	// process has ended on this node is taken over without waiting.
	Node string `json:"node,omitempty"`
	PID  int    `json:"pid,omitempty"`
}

// Bounds of leases.
const (
	maxLeaseBody = 64 << 10       // a lease object read is at most this
	maxLeaseData = 32 << 10       // Holder.Data at most this
	maxLeaseTTL  = 24 * time.Hour // a body's TTL above this is taken as this
	minLeaseTTL  = time.Second
	// releaseRetries bounds the retries of Release's requests.
	releaseRetries = 2
	// DefaultLeaseTTL is the TTL of a lease object that cannot be read
	// (garbage): it expires this long after its last write.
	DefaultLeaseTTL = 5 * time.Minute
)

// Lease is a held lock object.
type Lease struct {
	b     Objects
	clk   LeaseClock
	key   string
	ttl   time.Duration
	start time.Time

	mu   sync.Mutex // serialises writes of the lease
	etag string
	body leaseBody

	lost     chan struct{}
	lostOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// Start is the server time the lease was created.
func (l *Lease) Start() time.Time { return l.start }

// Key is the lease's key.
func (l *Lease) Key() string { return l.key }

// Lost is closed when renewals failed for half the TTL, or another
// holder took the lease over: stop.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

func (l *Lease) markLost(why error) {
	l.lostOnce.Do(func() {
		l.b.Logger().Warn("s3 lease lost", "bucket", l.b.Config().Bucket, "key", fullKey(l.b, l.key), "err", why)
		close(l.lost)
	})
}

func newToken() string {
	var t [16]byte
	rand.Read(t[:])
	return hex.EncodeToString(t[:])
}

// ttlOf is the TTL a lease's body declares (bounded), or fallback.
func ttlOf(body *leaseBody, fallback time.Duration) time.Duration {
	if body == nil || body.TTLMs <= 0 {
		return fallback
	}
	return min(max(time.Duration(body.TTLMs)*time.Millisecond, minLeaseTTL), maxLeaseTTL)
}

// readLease reads the lease at key: its body (nil when unreadable:
// not JSON, no token, larger than maxLeaseBody) and its object info.
func readLease(ctx context.Context, b Objects, key string) (*leaseBody, ObjectInfo, error) {
	data, info, err := b.Get(ctx, key, maxLeaseBody, nil)
	if errors.Is(err, ErrTooLarge) { // garbage: its age is all that counts
		info, err = b.Head(ctx, key)
		return nil, info, err
	}
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	var body leaseBody
	if json.Unmarshal(data, &body) != nil || body.Token == "" {
		return nil, info, nil
	}
	return &body, info, nil
}

// write puts the lease's body with Seq moved on, under cond; on a
// precondition failure it checks whether the object is its own write
// (an attempt whose answer was lost) and adopts it.
func (l *Lease) write(ctx context.Context, cond Cond) error {
	l.body.Seq++
	data, err := json.Marshal(&l.body)
	if err != nil {
		return err
	}
	info, err := l.b.Put(ctx, l.key, cond, data)
	if errors.Is(err, ErrPrecondition) {
		cur, cinfo, rerr := readLease(ctx, l.b, l.key)
		if rerr == nil && cur != nil && cur.Token == l.body.Token && cur.Seq == l.body.Seq {
			l.etag = cinfo.ETag
			return nil
		}
	}
	if err != nil {
		return err
	}
	l.etag = info.ETag
	return nil
}

// Update replaces the holder's Data (renewing the lease).
func (l *Lease) Update(ctx context.Context, data []byte) error {
	if len(data) > maxLeaseData {
		return fmt.Errorf("lease %s: data of %d bytes, more than %d", l.key, len(data), maxLeaseData)
	}
	select {
	case <-l.lost:
		return fmt.Errorf("lease %s: lost", l.key)
	default:
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.body.Holder.Data
	l.body.Holder.Data = data
	if err := l.write(ctx, Cond{IfMatch: l.etag}); err != nil {
		l.body.Holder.Data = old
		if errors.Is(err, ErrPrecondition) {
			l.markLost(err)
		}
		return err
	}
	return nil
}

// Release stops renewing and deletes the lease if it is still this
// holder's (by its ETag; best effort: between the check and the delete
// only an expired lease can be taken over).
func (l *Lease) Release(ctx context.Context) error {
	l.stopOnce.Do(func() { close(l.stop) })
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	// Few retries: a lease not deleted expires by itself (and one of a
	// process that has ended on this machine is taken over at once), so
	// a holder failing because the server is down does not wait for it
	// the whole retry budget again.
	b := LimitRetries(l.b, releaseRetries)
	info, err := b.Head(ctx, l.key)
	if errors.Is(err, ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.ETag != l.etag {
		return nil // taken over: not ours to delete
	}
	return b.Delete(ctx, l.key)
}

// renew rewrites the lease at every tick (every ttl/5) until Release;
// renewals failing for ttl/2 since lastOK, or another holder's write,
// lose it.
func (l *Lease) renew(tick <-chan time.Time, stopTick func(), lastOK time.Time) {
	defer close(l.done)
	defer stopTick()
	for {
		select {
		case <-l.stop:
			return
		case <-tick:
		}
		ctx, cancel := context.WithTimeout(context.Background(), lastOK.Add(l.ttl/2).Sub(l.clk.Now()))
		go func() { // Release cuts a renewal short
			select {
			case <-l.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		l.mu.Lock()
		err := l.write(ctx, Cond{IfMatch: l.etag})
		l.mu.Unlock()
		cancel()
		select {
		case <-l.stop: // released meanwhile: whatever the write did
			return
		default:
		}
		switch {
		case err == nil:
			lastOK = l.clk.Now()
		case errors.Is(err, ErrPrecondition):
			l.markLost(err)
			return
		case l.clk.Now().Sub(lastOK) >= l.ttl/2:
			l.markLost(err)
			return
		default:
			l.b.Logger().Warn("s3 lease renewal failed", "bucket", l.b.Config().Bucket, "key", fullKey(l.b, l.key), "err", err)
		}
	}
}

// fullKey is key with o's prefix, for messages.
func fullKey(o Objects, key string) string {
	if p := o.Config().Prefix; p != "" {
		return p + "/" + key
	}
	return key
}
