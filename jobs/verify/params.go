package verify

import (
	"fmt"
	"strconv"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// Bounds and defaults of verify's worker pools. Two readers keep two
// direct reads in flight: one at a time, the disk idles between a read
// and the next (the test VM reads 4 MiB chunks with O_DIRECT at about
// 500 MB/s one at a time, 1.05 GB/s two at a time).
const (
	DefaultReadThreads   = 2
	DefaultVerifyThreads = 4
	MaxThreads           = 32
	maxOutdatedDays      = 100 * 365
)

// Options are the parameters of a verify job.
type Options struct {
	// Selector names the snapshots to verify.
	store.Selector
	// ChunkOrder is OrderAuto, OrderInode or OrderIndex.
	ChunkOrder    string
	ReadThreads   int
	VerifyThreads int
	// IgnoreVerified skips snapshots whose last verification was ok,
	// unless it is older than OutdatedAfter days (when that is set).
	IgnoreVerified bool
	OutdatedAfter  int // days; -1: never outdated
}

// ParseParams reads verify's key=value parameters:
//
//	ns=NS  snapshots=REF[,REF…]  chunk-order=auto|inode|index
//	read-threads=1..32  verify-threads=1..32
//	ignore-verified[=true|false]  outdated-after=DAYS
func ParseParams(m map[string]string) (Options, error) {
	p := jobs.NewParams("verify", m)
	o := Options{
		Selector:       p.Selector(),
		ChunkOrder:     p.Enum("chunk-order", jobs.OrderAuto, jobs.OrderAuto, jobs.OrderInode, jobs.OrderIndex),
		ReadThreads:    p.Int("read-threads", DefaultReadThreads, 1, MaxThreads),
		VerifyThreads:  p.Int("verify-threads", DefaultVerifyThreads, 1, MaxThreads),
		IgnoreVerified: p.Bool("ignore-verified", false),
		OutdatedAfter:  p.Int("outdated-after", -1, 0, maxOutdatedDays),
	}
	if err := p.Done(); err != nil {
		return o, err
	}
	if _, given := m["outdated-after"]; given && !o.IgnoreVerified {
		return o, fmt.Errorf("%w: verify outdated-after= needs ignore-verified", jobs.ErrBadParam)
	}
	return o, nil
}

// Params returns the options as the key=value parameters that
// ParseParams reads back.
func (o Options) Params() map[string]string {
	m := map[string]string{}
	jobs.SelectorParams(m, o.Selector)
	if o.ChunkOrder != "" {
		m["chunk-order"] = o.ChunkOrder
	}
	if o.ReadThreads > 0 {
		m["read-threads"] = strconv.Itoa(o.ReadThreads)
	}
	if o.VerifyThreads > 0 {
		m["verify-threads"] = strconv.Itoa(o.VerifyThreads)
	}
	if o.IgnoreVerified {
		m["ignore-verified"] = "true"
	}
	if o.OutdatedAfter >= 0 && o.IgnoreVerified {
		m["outdated-after"] = strconv.Itoa(o.OutdatedAfter)
	}
	return m
}
