// Package objstore is cairn's client of an S3-compatible bucket (AWS S3,
// MinIO, Ceph RGW): objects under one key prefix, read, written,
// conditionally created, touched, listed and deleted, with retries and
// backoff on server errors, throttling and timeouts. It knows nothing of
// snapshots or chunks: package store lays its datastore out on it.
//
// Leases (lease.go) are lock objects with a heartbeat: created with
// If-None-Match, renewed with If-Match, taken over when expired with
// If-Match on the expired ETag, so that two hosts never both hold one.
// A holder whose renewals fail for half the lease stops (Lease.Lost).
//
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY /
// AWS_SESSION_TOKEN or from a file only its owner can read; never from the
// command line, never logged.
package objstore
