// Package chunk owns the content-level building blocks of cairn: SHA-256
// chunk digests, the chunkers that cut a stream into chunks (fixed-size and
// PBS-compatible buzhash content-defined chunking), the DataBlob codec that
// wraps every stored chunk, and a large-block reader that feeds the
// chunkers.
//
// Nothing in this package knows about files on disk or the datastore
// layout; that is the job of package store.
package chunk
