// Package prune owns cairn's retention rules: which snapshots of a group
// a prune keeps and which it removes, and the prune job that applies
// that plan to a store.
//
// The rules are Proxmox Backup Server's (pbs-datastore/src/prune.rs),
// so that a PBS user finds what they know and a store pruned by cairn is
// the store PBS would have left:
//
//   - A group's snapshots are taken newest first.
//   - Unfinished snapshots (no manifest) come first: the newest one is
//     marked keep-partial while no finished snapshot is newer (it may be
//     a backup still running); every other one is marked remove.
//   - Then keep-last, keep-hourly, keep-daily, keep-weekly, keep-monthly
//     and keep-yearly run in that order. Each rule walks the snapshots no
//     earlier rule marked and keeps the newest snapshot of each period
//     (a snapshot for keep-last; an hour, day, ISO week (%G/%V), month
//     or year of local time for the others) that no snapshot kept by an
//     earlier rule already covers, until it has kept N periods; the
//     other snapshots of a period it kept are marked remove.
//   - Protected snapshots are never removed: whatever a rule would have
//     marked them, their mark is protected, and they do not count
//     towards any rule's N.
//   - Whatever is left unmarked is removed.
//   - Options with no keep rule at all (every count unset or 0) remove
//     nothing. PBS computes the marks and then keeps everything; Plan
//     says so in the marks themselves: keep (or protected, keep-partial).
//
// Plan is a pure function of the snapshots, the options and the time
// zone; the job (Kind, whose key=value parameters ParseParams reads
// into JobOptions, and whose result is a Report) lists each selected
// group, plans it and removes the snapshots marked remove through
// store.ForgetSnapshot, oldest first as PBS does. A snapshot that is
// locked (a backup building on it, a verify or a tape export reading
// it) or protected meanwhile is skipped with a log line, not counted
// as a failure. Removal never follows a symlink: a group whose
// namespace, type or group directory is a symlink is not pruned, and
// a snapshot entry that is one is refused by ForgetSnapshot (both are
// reported as errors of the job).
package prune
