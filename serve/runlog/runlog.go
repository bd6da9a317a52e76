package runlog

import (
	"time"
)

// Result is how a run ended (or that it has not).
type Result string

// The results of a run.
const (
	ResultRunning   Result = "running"
	ResultOK        Result = "ok"
	ResultFailed    Result = "failed"
	ResultCancelled Result = "cancelled"
	// ResultSkipped: the run was due but not started (the job's kind was
	// already running, or the daemon was stopping).
	ResultSkipped Result = "skipped"
)

// Run is one run of a scheduled job.
type Run struct {
	Job       string    `json:"job"`  // the job's name in the configuration
	Kind      string    `json:"kind"` // backup, verify, prune, gc, sync, tape-export
	UPID      string    `json:"upid,omitempty"`
	Due       time.Time `json:"due"` // when the schedule said to run it
	Start     time.Time `json:"start"`
	End       time.Time `json:"end,omitzero"`
	Result    Result    `json:"result"`
	Error     string    `json:"error,omitempty"` // the first error, when Result is failed
	Bytes     int64     `json:"bytes"`
	Chunks    int64     `json:"chunks"`
	CatchUp   bool      `json:"catch_up,omitempty"` // run once after downtime for missed times
	LogTail   []string  `json:"log_tail,omitempty"` // the job's last log lines, bounded
	ExitState string    `json:"state,omitempty"`    // the job framework's final state
}

// Duration is how long the run took (so far, while running).
func (r Run) Duration(now time.Time) time.Duration {
	if r.End.IsZero() {
		return now.Sub(r.Start)
	}
	return r.End.Sub(r.Start)
}

// Group is a backup group's newest finished snapshot.
type Group struct {
	Namespace string        `json:"ns,omitempty"`
	Type      string        `json:"type"`
	ID        string        `json:"id"`
	Newest    time.Time     `json:"newest,omitzero"` // zero: no finished snapshot
	Snapshots int           `json:"snapshots"`
	Bytes     int64         `json:"bytes"`             // logical size of the newest snapshot
	MaxAge    time.Duration `json:"max_age,omitempty"` // 0: staleness not watched
}

// Name is the group's path, "ns/a/b/TYPE/ID" or "TYPE/ID".
func (g Group) Name() string {
	name := g.Type + "/" + g.ID
	if g.Namespace != "" {
		name = "ns/" + g.Namespace + "/" + name
	}
	return name
}

// Stale reports whether the group is watched and its newest finished
// snapshot is older than MaxAge at now (or it has none).
func (g Group) Stale(now time.Time) bool {
	return g.MaxAge > 0 && (g.Newest.IsZero() || now.Sub(g.Newest) > g.MaxAge)
}

// Sample is the store's size at one time.
type Sample struct {
	Time         time.Time `json:"time"`
	StoredBytes  int64     `json:"stored_bytes"`  // bytes of chunk files on disk or in the bucket
	LogicalBytes int64     `json:"logical_bytes"` // bytes the snapshots hold, before dedup and compression
	Chunks       int64     `json:"chunks"`
	Snapshots    int64     `json:"snapshots"`
}

// Dedup is LogicalBytes over StoredBytes (0 for an empty store).
func (s Sample) Dedup() float64 {
	if s.StoredBytes <= 0 {
		return 0
	}
	return float64(s.LogicalBytes) / float64(s.StoredBytes)
}

// Status is everything the daemon knows at one moment.
type Status struct {
	Store   string    `json:"store"`
	Now     time.Time `json:"now"`
	Started time.Time `json:"started"` // when the daemon started
	// Runs holds the recent runs, newest first, at most a bounded number
	// per job; running ones included.
	Runs    []Run     `json:"runs"`
	Groups  []Group   `json:"groups"`
	Current Sample    `json:"current"` // the newest sample
	Series  []Sample  `json:"history"` // oldest first, bounded (History)
	LastGC  time.Time `json:"last_gc,omitzero"`
	// Next holds each job's next due time, by job name.
	Next map[string]time.Time `json:"next,omitempty"`
}
