// Package storesync owns copying snapshots from one store to another:
// the library behind `cairn sync` and the sync job kind (.jobs/sync),
// what Proxmox Backup Server's sync job and restic's copy do. The job
// kind is Kind: ParseParams reads its key=value parameters into
// JobOptions (the source store and the Syncer's Options); its result,
// as a Syncer's, is a Report. New makes a Syncer for callers outside
// the job manager.
//
// It works between any two stores through the store API only, so the
// same code copies local to local, local to an object store and back:
// each snapshot is rebuilt in the target as a backup (store.StartBackup
// at the source snapshot's time), which gives the copy the target's
// group backup lock, a registered writer (GC's oldest-writer rule), and
// the manifest written last. A copy cut short (an error, Ctrl-C, kill
// -9) leaves an unfinished snapshot at most, never a complete-looking
// one; the next sync removes that leftover and copies it again.
//
// What is copied: the source's finished snapshots the selection names
// (a snapshot, a group, or a namespace and those below it), group by
// group, oldest first. As in PBS, only snapshots newer than the target
// group's newest finished snapshot are added (StartBackup refuses a time
// not newer than the group's newest snapshot); one already in the target
// is skipped; older ones are skipped and reported as such.
//
// How: for every index of a snapshot, in the manifest's order, the
// index is opened in the source and checked against the manifest (header
// checksum and size) and over its entries (their SHA-256); each chunk it
// lists is reused in the target when there (store.ReuseChunk: the base
// snapshot's chunks, then a lookup; either way touched for GC), else
// read from the source, decoded and checked against its digest and size
// (an encrypted chunk, which cannot be decoded without its key, by its
// CRC, and only where the manifest says the archive is encrypted), and
// inserted. Chunks move through a bounded pipeline: a feeder hands the
// index's digests over a channel of Workers slots to Workers goroutines,
// each with one blob buffer and one decode buffer. Then the index file
// is copied byte for byte (hashed again as it is copied), blobs byte for
// byte after their checksum and decoding were checked, and the source's
// manifest is written last with its fields kept (signature, notes,
// unknown fields) and its verify state dropped: that is the source's
// verdict, not the target's.
//
// Groups are copied two at a time (pipeline.go): one snapshot copies
// chunks while a snapshot of the other group finishes (its files and
// manifest written, on a bucket a request or more each), so the latency
// of one hides behind the other; a group's snapshots stay one after the
// other, oldest first, each with its manifest last.
//
// RemoveVanished then removes, through store.ForgetSnapshot, the
// finished snapshots of the selected groups that the target has and the
// source no longer has (in namespace mode, also of the target's groups
// the source has no more). Protected snapshots are kept, and so are
// snapshots in use; nothing is removed when the source could not be
// listed whole, or when the selected namespace or group is missing in
// the source (a typo must not empty the target).
package storesync
