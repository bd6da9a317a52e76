// Package restore writes archives of a snapshot back out: images to a
// file, a block device or a stream, with chunks fetched, decoded and
// checked by a pool of workers and written with positional writes; all-
// zero chunks become holes. It reads the store and never writes it.
package restore
