// Package chunk owns the content-level building blocks of cairn: SHA-256
// chunk digests, the chunkers that cut a stream into chunks (fixed-size and
// PBS-compatible buzhash content-defined chunking), the DataBlob codec that
// wraps every stored chunk, and a large-block reader that feeds the
// chunkers.
//
// A DataBlob is one of (PBS pbs-datastore data_blob.rs, file_formats.rs)
//
//	plain, zstd:              magic[8] | crc32 LE[4] | payload
//	encrypted, encrypted+zstd: magic[8] | crc32 LE[4] | iv[16] | tag[16] | ciphertext
//
// The CRC (IEEE) covers what follows the header: the payload, or for the
// encrypted kinds the ciphertext only (IV and tag are protected by the GCM
// tag itself). The ciphertext is AES-256-GCM of the data, or of its zstd
// frame for encrypted+zstd, with empty associated data; the key and the
// keyed digest SHA-256(data ‖ id_key) that names an encrypted chunk are
// package crypt's. EncodeEncryptedBlob, DecodeBlobKey and DecodeChunkKey
// are the encrypted side; without a key CheckCRC still checks magic, CRC
// and header size, as PBS's verify does. DecodeChunkData is for readers
// of the data alone (the mount, restores): it checks the data's digest
// and skips the CRC, a weaker check of the same bytes; whoever keeps or
// passes on the blob (sync, tape) or judges it (verify) checks the CRC
// too.
//
// Nothing in this package knows about files on disk or the datastore
// layout; that is the job of package store.
package chunk
