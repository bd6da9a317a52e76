package runlog

import (
	"sync"
	"time"
)

// Journal keeps the recent runs of each job in one JSON file: at most
// perJob runs a job, newest first. The scheduler reads from it when a
// job last ran (to catch up once after downtime), the status page and
// metrics its runs.
type Journal struct {
	mu     sync.Mutex
	path   string
	perJob int
	runs   []Run // newest first
}

// OpenJournal reads the journal at path (none yet: an empty one) that
// keeps at most perJob runs of each job (at least 1).
func OpenJournal(path string, perJob int) (*Journal, error) {
	j := &Journal{path: path, perJob: max(perJob, 1)}
	if err := readJSON(path, &j.runs); err != nil {
		return nil, err
	}
	j.runs = j.bounded(j.runs)
	return j, nil
}

// Record adds r, or replaces the run of the same job that started at the
// same time (a running run when it ends), and writes the file.
func (j *Journal) Record(r Run) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	runs := []Run{r}
	for _, old := range j.runs {
		if old.Job == r.Job && old.Start.Equal(r.Start) {
			continue
		}
		runs = append(runs, old)
	}
	j.runs = j.bounded(runs)
	return writeJSON(j.path, j.runs)
}

// Runs returns the runs, newest first.
func (j *Journal) Runs() []Run {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]Run(nil), j.runs...)
}

// LastDue returns the due time of the newest run of job (zero: never).
func (j *Journal) LastDue(job string) time.Time {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, r := range j.runs {
		if r.Job == job {
			return r.Due
		}
	}
	return time.Time{}
}

// bounded keeps the newest perJob runs of each job, in order.
func (j *Journal) bounded(runs []Run) []Run {
	count := map[string]int{}
	out := runs[:0:0]
	for _, r := range runs {
		if count[r.Job] < j.perJob {
			count[r.Job]++
			out = append(out, r)
		}
	}
	return out
}
