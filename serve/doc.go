// Package serve is cairn serve: the daemon that runs one store by
// itself. It owns
//
//   - kinds.go: Kinds, every kind of job cairn has (the one list: the
//     daemon, the mount's .jobs tree and the foreground commands take
//     it), and NewManager, a job manager with all of them;
//   - options.go: Options, JobSpec, StaleSpec (what the configuration
//     gives), Schedule and Notifier (what packages calendar and notify
//     provide), and their checks;
//   - daemon.go: Daemon (New), its Status and Reload;
//   - run.go: Run, the loop: jobs started as they fall due, the catch-up
//     after downtime, the staleness check every StaleEvery, SIGHUP;
//   - jobrun.go: one scheduled run through the job manager, recorded in
//     the journal (runlog.Journal) running and when it ends, and the
//     events started, succeeded, failed;
//   - groups.go: the groups' newest snapshots, staleness (CheckStale)
//     and the store's size samples (runlog.History);
//   - web.go (the HTTP listener: Options.Handlers and /healthz),
//     mount.go (--mount: the store mounted with package fs beside the
//     jobs), sdnotify.go (readiness for systemd's Type=notify).
//
// The rules:
//
//   - One job of a kind at a time: a run that falls due while a run of
//     the same kind (scheduled, started from the mount's control file,
//     or in another process on the store) has not ended is not queued:
//     it is recorded as skipped (runlog.ResultSkipped, with the reason)
//     and the job runs at its next due time.
//   - A job's next due time is always the first after now: a loop late
//     for several due times runs the job once.
//   - Catch-up: at start, a job with CatchUp whose schedule had a due
//     time after its newest recorded run (the journal's, skipped runs
//     included) and up to now runs once at once, recorded with CatchUp
//     and the first missed due time. A job that never ran is not caught
//     up; it first runs when next due.
//   - Events: started once the manager has started the job; then
//     succeeded or failed (one event per run), told once the run's end
//     and the sample after it are in the status; a run the manager could
//     not start for another reason than a running job is failed alone.
//     A cancelled run (the daemon stopping, a cancel written to the
//     control file) is recorded, not notified.
//   - Staleness: each watched group's newest finished snapshot is read
//     every StaleEvery (default a minute); a stale group is reported
//     once, again every StaleRepeat (24 h) while it stays stale, and
//     fresh once when it has a new snapshot. What was reported is not
//     kept across restarts: a group still stale is reported again.
//   - Samples: at start and after each run, one walk of the snapshot
//     directories (two stats a snapshot) counts the snapshots and finds
//     each group's newest, whose manifest is read for its size only when
//     it is new (an idle store reads none); stored bytes, chunks and
//     logical bytes are the last GC's figures (.gc-status), so a sample
//     never walks the chunks.
//   - Stopping (ctx ends: SIGTERM, SIGINT): no job is started any more,
//     the running ones are cancelled through the manager and waited
//     for, the store unmounted, the listener shut; Run returns nil.
//
// The journal and the history live in Options.State (default the
// store's .cairn-serve directory).
package serve
