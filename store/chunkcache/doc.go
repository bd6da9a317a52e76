// Package chunkcache owns reading an archive's data: a byte-bounded cache
// of decoded, digest-checked chunks shared by every reader of a store
// (Cache), and an io.ReaderAt over an index through it (Reader). It needs
// only a Source of raw chunk blobs (store.NewCache makes a cache of a
// store's chunks) and an index (store/index); it imports nothing of
// package store.
//
// Files:
//
//	source.go       Source and Blob: what the cache asks of where chunks live
//	cache.go        Cache: New, Get/GetKey/GetHeld, loads decoded into
//	                recycled buffers, a scan's share (scanShare), Stats
//	cache_flight.go one load per chunk however many ask for it
//	chunkbuf.go     the recycled buffers: size classes, references, the
//	                bounded free list; Held, data held from recycling
//	reader.go       Reader: ReadAt, WriteTo, ReadError (where, which chunk)
//	readahead.go    the read-ahead of a sequential reader, past zero chunks
//	slice.go        Reader.Slice, a read that lies in one chunk, no copy
//	key.go          IndexKey (an encrypted snapshot's index decrypts) and
//	                GetKey
//
// A chunk read with a key is cached under the key's fingerprint and its
// digest, so what was checked under one key is never served to another
// reader. A chunk that does not decode or check is ErrCorrupt (which is
// store.ErrCorruptChunk); a chunk of another size than its index entry
// says, ErrSizeMismatch. Why the buffers are recycled, and the figures
// behind the bounds, are in docs/design/store.md ("Chunk memory").
package chunkcache
