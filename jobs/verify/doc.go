// Package verify is the verify job kind (VerifyKind): it checks the
// manifests, blobs and indexes of the selected snapshots, then every
// chunk they use once (CRC, decoding, SHA-256 and size; encrypted
// chunks: CRC only), reading chunks on a pool of readers in index or
// inode order and judging them on a pool of checkers. A chunk that fails
// twice is renamed <digest>.N.bad; each snapshot's manifest records
// verify_state ok or failed with the job's UPID.
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
// ParseVerifyParams reads its key=value parameters; VerifyReport is the
// result its Status carries.
package verify
