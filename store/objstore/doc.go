// Package objstore is cairn's client of an S3-compatible bucket (AWS S3,
// MinIO, Ceph RGW): objects under one key prefix, read, written,
// conditionally created, touched, listed and deleted, with retries and
// backoff on server errors, throttling and timeouts. It knows nothing of
// snapshots or chunks: package store lays its datastore out on it.
//
// The client underneath is github.com/minio/minio-go/v7: maintained, a
// small dependency tree, and it sends conditional writes (If-None-Match,
// If-Match) that S3 and MinIO honour. Its own retries are turned off:
// retry.go retries, bounded (Options.Retries), with exponential backoff
// and jitter, on 5xx, 429/SlowDown, timeouts and refused, reset or closed
// connections; each attempt is bounded (15 s plus 1 s per MiB it moves, by
// default: Options.Timeout), so a stalled request is cut and retried; every wait
// ends with the caller's context, and every retry is logged (slog).
//
// Every read is bounded by the caller's limit (ErrTooLarge before the
// body is read when Content-Length is larger), and its memory by what
// comes: a Content-Length is trusted with at most 8 MiB (or the caller's
// buffer) before the bytes arrive. Errors are *Error: they
// name the operation, the bucket and the key and match the package's
// classes (ErrNotExist, ErrAccessDenied, ErrNoBucket, ErrPrecondition,
// ErrTooLarge); they never show credentials (requests are signed in
// headers, which no error shows).
//
// Times compared across hosts are the server's: object LastModified, and
// ServerTime, the Date of the last response plus the local monotonic time
// since. HTTP dates have a one-second resolution.
//
// Leases (lease*.go) are lock objects with a heartbeat: created with
// If-None-Match, renewed every TTL/5 with If-Match, taken over when
// expired (LastModified + TTL + 1 s before the server's time) with
// If-Match on the expired ETag, so that two hosts never both hold one:
// of two conditional writes on one ETag the server accepts one. A holder
// whose renewals fail for half the TTL, or who finds another's write,
// stops (Lease.Lost) well before others may see the lease expire. The
// body carries a random token so that a retried write whose first
// attempt landed is recognised as the holder's own.
// Renewals and waits are timed by the bucket's LeaseClock (the host's
// clock; the in-memory bucket of package memstore brings one its tests
// move on).
//
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN or from a file only its owner can read; never from the
// command line, never logged.
package objstore
