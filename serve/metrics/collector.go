package metrics

import (
	"math"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/serve/runlog"
)

var (
	groupLabels = []string{"ns", "type", "id"}
	jobLabels   = []string{"job", "kind"}
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("cairn_"+name, help, labels, nil)
}

// The descriptions of every metric; collector.Describe sends them all.
var (
	daemonStart = desc("daemon_start_time_seconds", "When the daemon started (Unix time).")

	storeInfo    = desc("store_info", "The store the daemon keeps (always 1).", "store")
	storeStored  = desc("store_stored_bytes", "Bytes of chunk files on disk or in the bucket.")
	storeLogical = desc("store_logical_bytes", "Bytes the snapshots hold, before deduplication and compression.")
	storeChunks  = desc("store_chunks", "Chunks in the store.")
	storeSnaps   = desc("store_snapshots", "Snapshots in the store.")
	storeDedup   = desc("store_dedup_ratio", "Logical bytes over stored bytes (0 for an empty store).")
	storeSampled = desc("store_sample_timestamp_seconds", "When the store's figures were measured (Unix time).")
	storeLastGC  = desc("store_last_gc_timestamp_seconds", "When the last garbage collection ended (Unix time).")

	groupNewest = desc("group_last_snapshot_timestamp_seconds", "When the group's newest finished snapshot was taken (Unix time).", groupLabels...)
	groupBytes  = desc("group_last_snapshot_bytes", "Logical size of the group's newest finished snapshot.", groupLabels...)
	groupSnaps  = desc("group_snapshots", "Snapshots of the group.", groupLabels...)
	groupStale  = desc("group_stale", "1 when the group is watched and its newest finished snapshot is older than its maximum age.", groupLabels...)
	groupMaxAge = desc("group_max_age_seconds", "The age after which the group is stale (watched groups only).", groupLabels...)

	jobStart    = desc("job_last_run_start_timestamp_seconds", "When the job's newest run started (Unix time).", jobLabels...)
	jobDuration = desc("job_last_run_duration_seconds", "How long the job's newest run took (so far, while it runs).", jobLabels...)
	jobBytes    = desc("job_last_run_bytes", "Bytes the job's newest run handled.", jobLabels...)
	jobChunks   = desc("job_last_run_chunks", "Chunks the job's newest run handled.", jobLabels...)
	jobResult   = desc("job_last_run_result", "1 for the result of the job's newest run, 0 for the others.", append(jobLabels, "result")...)
	jobSuccess  = desc("job_last_success", "1 when the newest run of the job that ended ended well.", jobLabels...)
	jobGoodEnd  = desc("job_last_success_timestamp_seconds", "When the job's newest good run ended (Unix time).", jobLabels...)
	jobNext     = desc("job_next_run_timestamp_seconds", "When the job is next due (Unix time).", "job")

	mountHits    = desc("mount_cache_hits_total", "Chunks the mount found in its cache.")
	mountMisses  = desc("mount_cache_misses_total", "Chunks the mount did not find in its cache.")
	mountLoaded  = desc("mount_loaded_bytes_total", "Chunk file bytes the mount read from the store.")
	mountDecoded = desc("mount_decoded_bytes_total", "Plain bytes the chunks the mount loaded decoded to.")
	mountServed  = desc("mount_served_bytes_total", "Bytes the mount returned to readers.")
	mountZero    = desc("mount_zero_hits_total", "All-zero chunks the mount served without I/O.")
	mountChunkEr = desc("mount_chunk_errors_total", "Chunk loads of the mount that failed (missing, corrupt).")
	mountReadEr  = desc("mount_read_errors_total", "Read requests of the mount that failed with EIO.")
	mountCache   = desc("mount_cache_size_bytes", "The bound of the mount's chunk cache.")
)

// results are the values of job_last_run_result's result label.
var results = []runlog.Result{runlog.ResultRunning, runlog.ResultOK, runlog.ResultFailed, runlog.ResultCancelled, runlog.ResultSkipped}

// collector reads the status and the mount's counters at each scrape.
type collector struct {
	status func() runlog.Status
	mount  func() (fs.Stats, bool)
}

func newCollector(status func() runlog.Status, mount func() (fs.Stats, bool)) *collector {
	return &collector{status: status, mount: mount}
}

// Describe sends the description of every metric the collector makes.
func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		daemonStart, storeInfo, storeStored, storeLogical, storeChunks, storeSnaps, storeDedup, storeSampled, storeLastGC,
		groupNewest, groupBytes, groupSnaps, groupStale, groupMaxAge,
		jobStart, jobDuration, jobBytes, jobChunks, jobResult, jobSuccess, jobGoodEnd, jobNext,
		mountHits, mountMisses, mountLoaded, mountDecoded, mountServed, mountZero, mountChunkEr, mountReadEr, mountCache,
	} {
		ch <- d
	}
}

// Collect sends the metrics of the status and mount of this moment.
func (c *collector) Collect(ch chan<- prometheus.Metric) {
	e := emitter{ch: ch}
	st := c.status()
	now := st.Now
	if now.IsZero() {
		now = time.Now()
	}
	e.time(daemonStart, st.Started)
	e.store(st)
	e.groups(st.Groups, now)
	e.jobs(st.Runs, now)
	for job, due := range st.Next {
		e.time(jobNext, due, job)
	}
	if c.mount != nil {
		if s, ok := c.mount(); ok {
			e.mountStats(s)
		}
	}
}

// emitter makes metrics from values that came from files and the
// daemon: label values made valid UTF-8, values made finite.
type emitter struct {
	ch chan<- prometheus.Metric
}

func (e emitter) send(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
	for i, l := range labels {
		labels[i] = strings.ToValidUTF8(l, "\uFFFD")
	}
	if math.IsNaN(v) {
		v = 0
	}
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d, err)
	}
	e.ch <- m
}

func (e emitter) gauge(d *prometheus.Desc, v float64, labels ...string) {
	e.send(d, prometheus.GaugeValue, v, labels...)
}

func (e emitter) counter(d *prometheus.Desc, v int64) {
	e.send(d, prometheus.CounterValue, float64(v))
}

// time sends t as Unix seconds; a zero time is left out (never, not
// 1970).
func (e emitter) time(d *prometheus.Desc, t time.Time, labels ...string) {
	if !t.IsZero() {
		e.gauge(d, float64(t.UnixNano())/1e9, labels...)
	}
}

func (e emitter) store(st runlog.Status) {
	cur := st.Current
	e.gauge(storeInfo, 1, st.Store)
	e.gauge(storeStored, float64(cur.StoredBytes))
	e.gauge(storeLogical, float64(cur.LogicalBytes))
	e.gauge(storeChunks, float64(cur.Chunks))
	e.gauge(storeSnaps, float64(cur.Snapshots))
	e.gauge(storeDedup, cur.Dedup())
	e.time(storeSampled, cur.Time)
	e.time(storeLastGC, st.LastGC)
}

// groups sends each group's metrics once (a group listed twice is
// sent as first listed: two series of the same labels break a scrape).
func (e emitter) groups(groups []runlog.Group, now time.Time) {
	seen := make(map[[3]string]bool, len(groups))
	for _, g := range groups {
		key := [3]string{g.Namespace, g.Type, g.ID}
		if seen[key] {
			continue
		}
		seen[key] = true
		l := key[:]
		e.time(groupNewest, g.Newest, l...)
		e.gauge(groupBytes, float64(g.Bytes), l...)
		e.gauge(groupSnaps, float64(g.Snapshots), l...)
		e.gauge(groupStale, boolValue(g.Stale(now)), l...)
		if g.MaxAge > 0 {
			e.gauge(groupMaxAge, g.MaxAge.Seconds(), l...)
		}
	}
}

// jobs sends each job's metrics from its runs (newest first).
func (e emitter) jobs(runs []runlog.Run, now time.Time) {
	type jobKey struct{ job, kind string }
	newest := map[jobKey]bool{}
	ended := map[jobKey]bool{}
	good := map[jobKey]bool{}
	for _, r := range runs {
		k := jobKey{r.Job, r.Kind}
		l := []string{r.Job, r.Kind}
		if !newest[k] {
			newest[k] = true
			e.lastRun(r, now, l)
		}
		if !ended[k] && finished(r.Result) {
			ended[k] = true
			e.gauge(jobSuccess, boolValue(r.Result == runlog.ResultOK), l...)
		}
		if !good[k] && r.Result == runlog.ResultOK {
			good[k] = true
			e.time(jobGoodEnd, r.End, l...)
		}
	}
}

func (e emitter) lastRun(r runlog.Run, now time.Time, l []string) {
	e.time(jobStart, r.Start, l...)
	if !r.Start.IsZero() {
		e.gauge(jobDuration, max(r.Duration(now), 0).Seconds(), l...)
	}
	e.gauge(jobBytes, float64(r.Bytes), l...)
	e.gauge(jobChunks, float64(r.Chunks), l...)
	for _, res := range results {
		e.gauge(jobResult, boolValue(r.Result == res), r.Job, r.Kind, string(res))
	}
}

// finished reports whether a run of result res ran and ended.
func finished(res runlog.Result) bool {
	return res == runlog.ResultOK || res == runlog.ResultFailed || res == runlog.ResultCancelled
}

func (e emitter) mountStats(s fs.Stats) {
	e.counter(mountHits, s.CacheHits)
	e.counter(mountMisses, s.CacheMisses)
	e.counter(mountLoaded, s.LoadedBytes)
	e.counter(mountDecoded, s.DecodedBytes)
	e.counter(mountServed, s.ServedBytes)
	e.counter(mountZero, s.ZeroHits)
	e.counter(mountChunkEr, s.ChunkErrors)
	e.counter(mountReadEr, s.ReadErrors)
	e.gauge(mountCache, float64(s.CacheSize))
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
