package tape

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/store"
)

// Defaults of the tape jobs.
const (
	DefaultTapeWorkers    = 1 // export readers (PBS: worker-threads)
	DefaultRestoreWorkers = 4 // restore check-and-insert goroutines
)

// ExportJobOptions are the parameters of a tape-export job.
type ExportJobOptions struct {
	Drive string // virtual drive directory (absolute)
	Pool  string
	// Selector names the snapshots to export.
	store.Selector
	// Groups adds every finished snapshot of these groups (the newest
	// only with LatestOnly), oldest first; with Groups and no Refs the
	// namespace tree is not walked.
	Groups []store.Group
	// LatestOnly exports only the newest finished snapshot of each group
	// of Groups or of the namespace tree (PBS's latest-only); explicit
	// snapshot references are taken as given.
	LatestOnly    bool
	WorkerThreads int
	TapeSize      int64 // capacity of tapes the pool creates
	NewSet        bool
	AutoCreate    bool
	ChunkOrder    string // OrderAuto, OrderInode or OrderIndex
}

// ParseExportParams reads tape-export's key=value parameters:
//
//	drive=DIR  pool=NAME  worker-threads=1..32  tape-size=SIZE
//	new-set[=true|false]  auto-create[=true|false]
//	snapshots=REF[,REF…]  ns=NS  chunk-order=auto|inode|index
//	groups=[ns/NAME/…]TYPE/ID[,…]  latest-only[=true|false]
func ParseExportParams(m map[string]string) (ExportJobOptions, error) {
	const kind = "tape-export"
	p := jobs.NewParams(kind, m)
	o := ExportJobOptions{
		Drive:         p.String("drive", ""),
		Pool:          p.String("pool", ""),
		Selector:      p.Selector(),
		WorkerThreads: p.Int("worker-threads", DefaultTapeWorkers, 1, MaxWorkers),
		NewSet:        p.Bool("new-set", false),
		AutoCreate:    p.Bool("auto-create", true),
		ChunkOrder:    p.Enum("chunk-order", jobs.OrderAuto, jobs.OrderAuto, jobs.OrderInode, jobs.OrderIndex),
		LatestOnly:    p.Bool("latest-only", false),
	}
	groups := p.String("groups", "")
	size := p.String("tape-size", "")
	if err := p.Done(); err != nil {
		return o, err
	}
	if err := checkDriveParam(kind, o.Drive); err != nil {
		return o, err
	}
	if err := checkPoolParam(kind, o.Pool, true); err != nil {
		return o, err
	}
	o.TapeSize = drive.DefaultCapacity
	if size != "" {
		n, err := jobs.ParseSize(size)
		if err != nil || n < drive.MinCapacity {
			return o, fmt.Errorf("%w: %s tape-size=%q: want a size of at least 1M (e.g. 64M, 2G)", jobs.ErrBadParam, kind, size)
		}
		o.TapeSize = n
	}
	var err error
	o.Groups, err = parseGroups(kind, o.Selector.NS, groups)
	return o, err
}

// parseGroups reads groups=: group names, taken in ns unless they name
// their own namespace.
func parseGroups(kind string, ns store.NS, list string) ([]store.Group, error) {
	var out []store.Group
	for _, g := range strings.Split(list, ",") {
		if g == "" {
			continue
		}
		r, err := store.ParseRef(g)
		if err == nil && (!r.Latest || strings.HasSuffix(strings.TrimRight(g, "/"), "/latest")) {
			err = fmt.Errorf("%w: a group has no time", store.ErrBadName)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s groups=%q: %w (want [ns/NAME/…]TYPE/ID)", jobs.ErrBadParam, kind, g, err)
		}
		if r.NS == "" {
			r.NS = ns
		}
		out = append(out, r.Group)
	}
	return out, nil
}

// Params returns the options as the parameters ParseExportParams
// reads back.
func (o ExportJobOptions) Params() map[string]string {
	m := map[string]string{"drive": o.Drive, "pool": o.Pool,
		"worker-threads": strconv.Itoa(o.WorkerThreads), "tape-size": strconv.FormatInt(o.TapeSize, 10),
		"new-set": strconv.FormatBool(o.NewSet), "auto-create": strconv.FormatBool(o.AutoCreate)}
	jobs.SelectorParams(m, o.Selector)
	if len(o.Groups) > 0 {
		names := make([]string, len(o.Groups))
		for i, g := range o.Groups {
			names[i] = g.String()
		}
		m["groups"] = strings.Join(names, ",")
	}
	if o.LatestOnly {
		m["latest-only"] = "true"
	}
	if o.ChunkOrder != "" {
		m["chunk-order"] = o.ChunkOrder
	}
	return m
}

// RestoreJobOptions are the parameters of a tape-restore job.
type RestoreJobOptions struct {
	Drive    string
	MediaSet format.UUID // zero: the newest set of Pool (or of all pools)
	Pool     string
	// SourceStore restores only snapshots of this datastore name.
	SourceStore   string
	Snapshots     []string // full names as on tape; empty: all
	WorkerThreads int
}

// ParseRestoreParams reads tape-restore's key=value parameters:
//
//	drive=DIR  media-set=UUID  pool=NAME  source-store=NAME
//	snapshots=SNAPSHOT[,SNAPSHOT…]  worker-threads=1..32
func ParseRestoreParams(m map[string]string) (RestoreJobOptions, error) {
	const kind = "tape-restore"
	p := jobs.NewParams(kind, m)
	o := RestoreJobOptions{
		Drive:         p.String("drive", ""),
		Pool:          p.String("pool", ""),
		SourceStore:   p.String("source-store", ""),
		WorkerThreads: p.Int("worker-threads", DefaultRestoreWorkers, 1, MaxWorkers),
	}
	set := p.String("media-set", "")
	snaps := p.String("snapshots", "")
	if err := p.Done(); err != nil {
		return o, err
	}
	if err := checkDriveParam(kind, o.Drive); err != nil {
		return o, err
	}
	if err := checkPoolParam(kind, o.Pool, false); err != nil {
		return o, err
	}
	if set != "" {
		u, err := format.ParseUUID(set)
		if err != nil {
			return o, fmt.Errorf("%w: %s media-set=%q: want a UUID (see cairn tape status)", jobs.ErrBadParam, kind, set)
		}
		o.MediaSet = u
	}
	for _, s := range strings.Split(snaps, ",") {
		if s == "" {
			continue
		}
		snap, err := ParseSnapshot(s)
		if err != nil {
			return o, fmt.Errorf("%w: %s snapshots=: %w (want [ns/NAME/…]TYPE/ID/TIME)", jobs.ErrBadParam, kind, err)
		}
		o.Snapshots = append(o.Snapshots, snap.String())
	}
	return o, nil
}

// Params returns the options as the parameters ParseRestoreParams
// reads back.
func (o RestoreJobOptions) Params() map[string]string {
	m := map[string]string{"drive": o.Drive, "worker-threads": strconv.Itoa(o.WorkerThreads)}
	if !o.MediaSet.IsZero() {
		m["media-set"] = o.MediaSet.String()
	}
	if o.Pool != "" {
		m["pool"] = o.Pool
	}
	if o.SourceStore != "" {
		m["source-store"] = o.SourceStore
	}
	if len(o.Snapshots) > 0 {
		m["snapshots"] = strings.Join(o.Snapshots, ",")
	}
	return m
}

func checkDriveParam(kind, dir string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return fmt.Errorf("%w: %s drive=%q: want the absolute path of the virtual tape drive directory", jobs.ErrBadParam, kind, dir)
	}
	return nil
}

func checkPoolParam(kind, pool string, required bool) error {
	if pool == "" && !required {
		return nil
	}
	if err := drive.CheckLabel(pool); err != nil {
		return fmt.Errorf("%w: %s pool=%q: want a pool name of letters, digits, '.', '_' or '-'", jobs.ErrBadParam, kind, pool)
	}
	return nil
}

// countSnapshots tallies the snapshots of a tape job's report: written
// (or restored), there before, failed; gone ones are none of these.
func countSnapshots(rs []SnapshotResult) (ok, present, failed int) {
	for _, s := range rs {
		switch s.State {
		case StateDone:
			ok++
		case StatePresent:
			present++
		case StateGone:
		default:
			failed++
		}
	}
	return ok, present, failed
}
