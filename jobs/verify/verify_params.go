package verify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

// Bounds and defaults of verify's worker pools.
const (
	DefaultReadThreads   = 1
	DefaultVerifyThreads = 4
	MaxThreads           = 32
	maxOutdatedDays      = 100 * 365
)

// VerifyOptions are the parameters of a verify job.
type VerifyOptions struct {
	// NS selects this namespace and those below it (when Snapshots is
	// empty). Refs in Snapshots without a namespace are taken in NS.
	NS        store.NS
	Snapshots []store.Ref
	// ChunkOrder is OrderAuto, OrderInode or OrderIndex.
	ChunkOrder    string
	ReadThreads   int
	VerifyThreads int
	// IgnoreVerified skips snapshots whose last verification was ok,
	// unless it is older than OutdatedAfter days (when that is set).
	IgnoreVerified bool
	OutdatedAfter  int // days; -1: never outdated
}

// ParseVerifyParams reads verify's key=value parameters:
//
//	ns=NS  snapshots=REF[,REF…]  chunk-order=auto|inode|index
//	read-threads=1..32  verify-threads=1..32
//	ignore-verified[=true|false]  outdated-after=DAYS
func ParseVerifyParams(m map[string]string) (VerifyOptions, error) {
	p := jobs.NewParams("verify", m)
	o := VerifyOptions{
		NS:             store.NS(strings.Trim(p.String("ns", ""), "/")),
		ChunkOrder:     p.Enum("chunk-order", jobs.OrderAuto, jobs.OrderAuto, jobs.OrderInode, jobs.OrderIndex),
		ReadThreads:    p.Int("read-threads", DefaultReadThreads, 1, MaxThreads),
		VerifyThreads:  p.Int("verify-threads", DefaultVerifyThreads, 1, MaxThreads),
		IgnoreVerified: p.Bool("ignore-verified", false),
		OutdatedAfter:  p.Int("outdated-after", -1, 0, maxOutdatedDays),
	}
	refs := p.String("snapshots", "")
	if err := p.Done(); err != nil {
		return o, err
	}
	if err := o.NS.Check(); err != nil {
		return o, fmt.Errorf("%w: verify ns=%q: %w", jobs.ErrBadParam, o.NS, err)
	}
	for _, r := range strings.Split(refs, ",") {
		if r == "" {
			continue
		}
		ref, err := store.ParseRef(r)
		if err != nil {
			return o, fmt.Errorf("%w: verify snapshots=: %w", jobs.ErrBadParam, err)
		}
		if ref.NS == "" {
			ref.NS = o.NS
		}
		o.Snapshots = append(o.Snapshots, ref)
	}
	if _, given := m["outdated-after"]; given && !o.IgnoreVerified {
		return o, fmt.Errorf("%w: verify outdated-after= needs ignore-verified", jobs.ErrBadParam)
	}
	return o, nil
}

// Params returns the options as the key=value parameters that
// ParseVerifyParams reads back.
func (o VerifyOptions) Params() map[string]string {
	m := map[string]string{}
	if o.NS != "" {
		m["ns"] = string(o.NS)
	}
	if len(o.Snapshots) > 0 {
		refs := make([]string, len(o.Snapshots))
		for i, r := range o.Snapshots {
			refs[i] = jobs.RefString(r)
		}
		m["snapshots"] = strings.Join(refs, ",")
	}
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
