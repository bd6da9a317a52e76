// Package metrics is cairn serve's Prometheus exposition: what the
// daemon knows of its store (a runlog.Status) and of its mount (the fs
// counters) as metrics named cairn_*, on an HTTP handler for /metrics
// and as a file for node_exporter's textfile collector.
//
//   - metrics.go: Metrics, New, Handler, WriteTextfile;
//   - collector.go: the prometheus.Collector that reads the status and
//     the mount's counters at scrape time (nothing runs between
//     scrapes) and the descriptions of every metric.
//
// The figures, all from the status of the moment of the scrape:
//
//   - the store: cairn_store_info{store}, stored and logical bytes,
//     chunks, snapshots, the deduplication ratio, the time of the
//     newest size sample and of the last GC;
//   - per group (labels ns, type, id): the newest finished snapshot's
//     time and size, the number of snapshots, cairn_group_stale (1: the
//     group is watched and its newest snapshot is older than its
//     maximum age) and that age;
//   - per job (labels job, kind): the newest run's start time,
//     duration, bytes and chunks, cairn_job_last_run_result{result}
//     (1 for the newest run's result, 0 for the others),
//     cairn_job_last_success (1 when the newest run that ended ended
//     well) and the time the newest good run ended; per job the next
//     due time (cairn_job_next_run_timestamp_seconds);
//   - the daemon's start time;
//   - the mount's counters (cache hits and misses, bytes loaded,
//     decoded and served, chunk and read errors) when a mount is kept.
//
// A sample alert: `time() - cairn_job_last_success_timestamp_seconds >
// 2*86400` or `cairn_group_stale == 1`.
package metrics
