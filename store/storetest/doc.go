// Package storetest holds the fixtures that the tests of several packages
// share: a fresh store, reproducible data, an image snapshot, the
// comparison of a pxar archive with the directory tree it was made from,
// and the hosts of one bucket (Bucket, EachBucket: in memory or on
// MinIO; PauseAt: a pause point between two calls).
// It is imported by tests only; it creates real stores and real files
// and reports mismatches through testing.TB.
package storetest
