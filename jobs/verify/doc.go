// Package verify is the verify job kind (Kind): it checks the
// manifests, blobs and indexes of the selected snapshots, then every
// chunk they use once (CRC, decoding, SHA-256 and size), reading chunks
// on a pool of readers in index or inode order and judging them on a
// pool of checkers. A chunk that fails twice is renamed <digest>.N.bad;
// each snapshot's manifest records verify_state ok or failed with the
// job's UPID.
//
// Encrypted snapshots are checked with the key the store holds for them
// (Store.SnapshotKey, by the fingerprint the manifest names): the
// manifest's signature, every chunk decrypted and hashed by the keyed
// digest, blobs decrypted. Without their key they are checked as PBS
// checks them, which never has it: chunks by CRC (which covers the
// ciphertext), header and ciphertext size against the index's plain
// size, indexes and blobs against the manifest; their verify_state is ok
// when all that holds, and the report counts those chunks apart
// (chunks_checked_without_key) and says per snapshot how it was checked.
// A chunk's check with one key never stands for a check with another or
// without a key: the job keeps one state per chunk and key (chunkRef).
// A chunk that fails with its snapshot's key but passes with the key of
// another selected snapshot that names it is good: the first snapshot's
// index is wrong, and the chunk stays. Keys never appear in the report
// or the log, only fingerprints.
//
// Verify judges a chunk by its own content only (CRC, decoding, digest).
// An index or manifest that disagrees with a good chunk (another size,
// another crypt mode) fails its snapshot with a message saying so and
// leaves the chunk in place, since other snapshots may share it; PBS
// renames the chunk aside when the size disagrees, which breaks them.
//
// Each snapshot is held locked (shared, store.LockSnapshot) while it is
// verified, so forget and prune refuse it meanwhile; one removed before
// the job reached it is logged as gone, not failed.
//
// ParseParams reads its key=value parameters into Options; Report is
// the result its Status carries.
package verify
