// Package catalog owns the media catalog: per tape, which chunk digests
// and which snapshots are in which tape file. It is PBS's media catalog
// (src/tape/media_catalog.rs, format v1.1), a binary log of records:
//
//	magic[8]
//	'L' file u64 | uuid[16] | seq_nr u64           media label (file 0), media set label (file 1)
//	'A' file u64 | uuid[16] | store_len u8 | pad[7] | store     chunk archive starts
//	'C' digest[32]                                  a chunk in that archive
//	'E' file u64 | uuid[16]                         chunk archive ends
//	'S' file u64 | uuid[16] | store_len u8 | pad u8 | name_len u16 | pad[4] | store ':' snapshot
//
// A catalog is created in a temporary file and renamed into place; later
// records are appended and committed (written and fsynced) at points where
// no chunk archive is open, so a crash leaves at most a torn tail, which
// Open cuts off. A Set answers questions over all tapes of a media set.
package catalog
