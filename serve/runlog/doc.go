// Package runlog is the record that cairn serve keeps of its store's
// life, and the one thing its notifications, metrics and status page
// read:
//
//   - Run: one run of a scheduled job (its name and kind, when it was
//     due, when it started and ended, its result and first error, the
//     bytes and chunks it handled);
//   - Group: a backup group's newest finished snapshot and the age after
//     which it is stale;
//   - Sample: the store's size, chunk count and deduplication at one
//     time, kept in a bounded History that lives in the store;
//   - Status: all of it at one moment, as the status page shows it;
//   - Event: what a notification tells (a run started, succeeded or
//     failed; a group went stale or is fresh again).
//
// The daemon (package serve) fills a Status; notify, metrics and status
// only read it. Nothing here touches the store's chunks or snapshots.
package runlog
