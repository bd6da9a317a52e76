package objstore

// Signatures of the implementation to come (replaced by the real files).

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"time"

	_ "github.com/minio/minio-go/v7" // the implementation's client
)

var errTODO = errors.New("objstore: not implemented yet")

// Options tune a Bucket.
type Options struct {
	// Transport replaces the HTTP transport (tests: a latency proxy is
	// reached through the endpoint instead; this is for fault injection).
	Transport http.RoundTripper
	// Retries is how many times a failed request is retried (5xx,
	// throttling, timeouts, connection errors) with exponential backoff
	// and jitter; 0 means the default (8).
	Retries int
	// Timeout bounds one request attempt; 0 means the default (2 min).
	Timeout time.Duration
}

// Bucket is an open bucket: safe for concurrent use.
type Bucket struct{}

// LoadCredentials reads keys from file (when not "") or from AWS_*.
func LoadCredentials(file string) (Credentials, error) { return Credentials{}, errTODO }

// ParseURL splits s3://BUCKET/PREFIX.
func ParseURL(u string) (bucket, prefix string, err error) { return "", "", errTODO }

// Open checks that the bucket exists and the credentials work.
func Open(ctx context.Context, cfg Config, cred Credentials, opt Options) (*Bucket, error) {
	return nil, errTODO
}

// Get reads a whole object of at most limit bytes into buf (reused).
func (b *Bucket) Get(ctx context.Context, key string, limit int64, buf []byte) ([]byte, ObjectInfo, error) {
	return nil, ObjectInfo{}, errTODO
}

// Put writes data (the concatenation of parts) to key under cond.
func (b *Bucket) Put(ctx context.Context, key string, cond Cond, parts ...[]byte) (ObjectInfo, error) {
	return ObjectInfo{}, errTODO
}

// Head describes key.
func (b *Bucket) Head(ctx context.Context, key string) (ObjectInfo, error) {
	return ObjectInfo{}, errTODO
}

// Touch copies key onto itself so that its LastModified becomes now.
func (b *Bucket) Touch(ctx context.Context, key string) (ObjectInfo, error) {
	return ObjectInfo{}, errTODO
}

// Delete removes keys; missing ones are not an error.
func (b *Bucket) Delete(ctx context.Context, keys ...string) error { return errTODO }

// List yields every object under prefix, in key order, after startAfter.
func (b *Bucket) List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) { yield(ObjectInfo{}, errTODO) }
}

// ListDirs lists the "directories" (common prefixes, ending in /) right
// under prefix.
func (b *Bucket) ListDirs(ctx context.Context, prefix string) ([]string, error) { return nil, errTODO }

// ServerTime estimates the server's clock now.
func (b *Bucket) ServerTime() time.Time { return time.Time{} }

// Lease is a held lock object.
type Lease struct{}

// Acquire takes the lease at key for h, waiting up to wait while another
// live holder has it (then *HeldError); an expired one is taken over.
func (b *Bucket) Acquire(ctx context.Context, key string, h Holder, ttl, wait time.Duration) (*Lease, error) {
	return nil, errTODO
}

// Leases lists the leases under prefix.
func (b *Bucket) Leases(ctx context.Context, prefix string) ([]LeaseInfo, error) { return nil, errTODO }

// Start is the server time the lease was created.
func (l *Lease) Start() time.Time { return time.Time{} }

// Lost is closed when renewals failed for half the TTL: stop.
func (l *Lease) Lost() <-chan struct{} { return nil }

// Update replaces the holder's Data (renewing the lease).
func (l *Lease) Update(ctx context.Context, data []byte) error { return errTODO }

// Release deletes the lease.
func (l *Lease) Release(ctx context.Context) error { return errTODO }
