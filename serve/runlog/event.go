package runlog

import "time"

// EventKind is what a notification is about.
type EventKind string

// The kinds of event the daemon reports.
const (
	EventStarted   EventKind = "started"   // a scheduled run began
	EventSucceeded EventKind = "succeeded" // it ended well
	EventFailed    EventKind = "failed"    // it failed (or could not start)
	EventStale     EventKind = "stale"     // a watched group's newest snapshot is too old (once a day until fixed)
	EventFresh     EventKind = "fresh"     // a stale group has a new snapshot again
)

// Event is one thing worth telling someone: the daemon makes them, the
// notifiers (package notify) deliver them.
type Event struct {
	Kind    EventKind `json:"event"`
	Time    time.Time `json:"time"`
	Store   string    `json:"store"`
	Host    string    `json:"host"`
	Run     *Run      `json:"run,omitempty"`   // for started, succeeded, failed
	Group   *Group    `json:"group,omitempty"` // for stale, fresh
	Summary string    `json:"summary"`         // one line a person reads: "verify nightly failed: 1 chunk corrupt"
}
