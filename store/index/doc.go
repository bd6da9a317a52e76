// Package index owns the two index formats of a PBS datastore, which list
// the chunks that together make an archive's data: the fixed index
// (.fidx, an image cut into equal chunks) and the dynamic index (.didx, a
// file archive cut where its content says). Both are a 4096-byte header
// followed by entries, all integers little-endian:
//
//	header   magic[8] | uuid[16] | ctime i64 | csum[32] | (fixed only:) size u64 | chunk size u64 | zero to 4096
//	.fidx    digest[32] per chunk, ceil(size / chunk size) of them
//	.didx    end u64 | digest[32] per chunk, end the exclusive data offset
//
// csum is the SHA-256 of the entries, the checksum a manifest records.
// A fixed index finds the chunk of an offset by division, a dynamic one
// by binary search (after trying the chunk of the previous read and its
// successor).
//
// Files:
//
//	index.go    the Index interface (Size, Len, Chunk, Find, Csum, Err),
//	            Open and Kind (by name), the magics, the shared writer
//	fixed.go    Fixed (OpenFixed) and FixedWriter
//	dynamic.go  Dynamic (OpenDynamic) and DynamicWriter
//	mmap.go     the read-only mapping both read through, whose faults (a
//	            file that shrank or a disk that failed) become ErrFault
//	copy.go     Copy, a byte-for-byte copy of an open index (store sync)
//
// Every check on open (size, magic, chunk size, growing ends, no chunk
// over chunk.MaxBlobSize, MaxFileSize) fails with ErrFormat naming the
// file. A writer streams entries into a temporary file and renames it
// into place at Close, after patching the header. What an index means
// within a snapshot (a manifest's checksum and size, an encrypted
// snapshot's key) is package store's; reading an archive's data through
// an index is store/chunkcache's Reader.
package index
