package objstore

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"time"
)

// Objects is a bucket as package store lays a datastore out on it: the
// client of an S3-compatible server (*Bucket) or the in-memory bucket of
// package memstore (tests, with fault injection). Keys are relative to
// the configured prefix. Every method takes a context and returns an
// error; the error classes (ErrNotExist, ErrPrecondition, ErrTooLarge,
// ...) are this package's.
//
// What an implementation must honour, and the store relies on (its
// design text argues each rule from these): a conditional write
// (Cond.IfAbsent, Cond.IfMatch) is decided by the server against the
// object's current state; a Get of a key reads its latest write. What
// the store does not rely on: that a listing shows every object (it may
// lag), that a Head is current (a cache may answer it), that a Put's or
// a Touch's success means it was done (answers are checked: Put's ETag
// against the body's MD5, Touch's LastModified against the time).
type Objects interface {
	// Config names the bucket (for messages; never a secret).
	Config() Config
	// ServerTime is the server's clock now (LastModified's clock).
	ServerTime() time.Time
	// Logger receives what the bucket's client logs (retries).
	Logger() *slog.Logger

	Get(ctx context.Context, key string, limit int64, buf []byte) ([]byte, ObjectInfo, error)
	GetTo(ctx context.Context, key string, limit int64, w io.Writer) (ObjectInfo, error)
	Put(ctx context.Context, key string, cond Cond, parts ...[]byte) (ObjectInfo, error)
	PutReader(ctx context.Context, key string, cond Cond, r io.ReaderAt, size int64) (ObjectInfo, error)
	Head(ctx context.Context, key string) (ObjectInfo, error)
	Touch(ctx context.Context, key string) (ObjectInfo, error)
	Delete(ctx context.Context, keys ...string) error
	List(ctx context.Context, prefix, startAfter string) iter.Seq2[ObjectInfo, error]
	ListDirs(ctx context.Context, prefix string) ([]string, error)
}

// retryLimiter is an Objects that can bound its retries (Lease.Release
// asks few: a lease not deleted expires by itself).
type retryLimiter interface {
	WithRetries(n int) Objects
}

// LimitRetries is o with at most n retries per request, when o can say.
func LimitRetries(o Objects, n int) Objects {
	if rl, ok := o.(retryLimiter); ok {
		return rl.WithRetries(n)
	}
	return o
}

var _ Objects = (*Bucket)(nil)

// Logger implements Objects.
func (b *Bucket) Logger() *slog.Logger { return b.opt.Logger }

// WithRetries is b with at most n retries per request (a shallow copy
// sharing the client and the clock).
func (b *Bucket) WithRetries(n int) Objects { return b.withRetries(n) }
