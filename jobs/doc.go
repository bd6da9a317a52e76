// Package jobs is cairn's job framework: the Manager that runs the jobs
// of one store (start, status, log, cancel; one job of a kind at a time
// per store, across processes through a lock in the store), the Job a
// running Work reports through (progress, log lines, errors, result),
// the Kind interface a kind of job implements, key=value parameters
// (ParseControl, Params) and PBS-style UPIDs. The same Manager runs jobs
// in the foreground of the CLI and in the background of a mount, whose
// .jobs/<kind>/control files hand their lines to Manager.Control.
//
// A kind plugs in through Kind: it checks its key=value parameters and
// returns the Work to run; the Work reports progress, log lines and
// errors through its *Job. Each kind lives in a package of its own below
// this one and registers with a Manager; cmd/cairn registers them all in
// one place. jobs/verify holds verify, jobs/tape the tape-export and
// tape-restore kinds with their engine; new kinds (gc, prune, sync) go to
// jobs/gc, jobs/prune, jobs/storesync. Package jobs imports none of them.
//
// Beside the framework it holds what several kinds share: the chunk read
// orders (OrderAuto, OrderInode, OrderIndex) and the sysfs reading that
// tells whether the store sits on a rotational disk (PathRotational).
//
// jobs/internal/crypttest makes the encrypted snapshots (Backup.Encrypt)
// that the kinds' tests verify, restore, export, sync and collect.
//
// Package jobs knows nothing of FUSE. Restores to files live in
// jobs/restore.
package jobs
