// Package jobs owns cairn's background work on a store: the job manager
// (start, status, log, cancel; one job of a kind at a time per store) and
// the kinds of job it runs: verify, tape-export and tape-restore. The same Manager runs
// jobs in the foreground of the CLI and in the background of a mount,
// whose .jobs/<kind>/control files hand their lines to ParseControl and
// Manager.Control.
//
// Verify judges a chunk by its own content only (CRC, decoding, digest).
// An index or manifest that disagrees with a good chunk (another size,
// another crypt mode) fails its snapshot with a message saying so and
// leaves the chunk in place, since other snapshots may share it; PBS
// renames the chunk aside when the size disagrees, which breaks them.
//
// A kind plugs in through the Kind interface: it checks its key=value
// parameters and returns the Work to run; the Work reports progress, log
// lines and errors through its *Job.
//
// Package jobs knows nothing of FUSE. The tape format, the virtual drive
// and the export and restore engines live in jobs/tape; the tape kinds
// here only parse parameters and report. Restores to files live in
// jobs/restore.
package jobs
