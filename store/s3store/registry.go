package s3store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
)

// The writer registry (rule 1, docs/design/store.md): one object, writerRegistryKey,
// naming the lease key of every writer that registered and has not
// ended. A listing of the bucket may lag (caching gateways, multi-site
// replication): a GC or a forget that learned the running writers from
// a listing of .cairn/leases/writers/ alone could miss one that started
// a moment before. The registry is read with a Get (its latest write)
// and proven current by writing it back If-Match the ETag read; a writer
// adds itself with the same read-modify-conditional-write before it
// looks at any chunk. So of a writer's registration and a reader's
// check, the one that wrote second saw the other: a GC either counts
// the writer, or the writer registered after the GC's check, after the
// GC's start, and every chunk it touches or uploads is newer than the
// GC's cutoff. Each named lease is then read by its key (a Get): live,
// it counts; expired or gone, its entry is dropped (a writer that died).
//
// The registry also names the snapshots published in the last
// recentKeep (Recent: added before the manifest is put). A GC's mark
// comes from a listing of the bucket too (the mirror's refresh): a
// snapshot finished a moment before, that the listing does not show yet,
// is marked from its manifest and indexes read by key (gc.go's
// markRecent), so that a lagging listing cannot make its chunks look
// unused once its writer has ended.

// writerRegistryKey is the registry object.
const writerRegistryKey = ".cairn/writers.json"

// Bounds of the registry.
const (
	maxRegistryBytes   = 4 << 20 // about 40,000 writers
	registryRetries    = 60      // conditional writes lost to other hosts before giving up
	registryRetryDelay = 50 * time.Millisecond
)

// recentKeep is how long a published snapshot stays in the registry: a
// listing is taken to show a snapshot within that time.
const recentKeep = 24 * time.Hour

type writerRegistry struct {
	Writers []string       `json:"writers"` // lease keys
	Recent  []recentCommit `json:"recent,omitempty"`
}

// recentCommit is a snapshot whose manifest a writer was about to put,
// at the server time At.
type recentCommit struct {
	Snapshot string    `json:"snapshot"`
	At       time.Time `json:"at"`
}

// updateRegistry applies change to the registry under a conditional
// write (created If-None-Match when there is none), retrying when
// another host wrote it meanwhile. change may drop entries; it runs
// again on every retry.
func (r *remote) updateRegistry(ctx context.Context, change func(ctx context.Context, reg *writerRegistry) error) error {
	for try := 0; ; try++ {
		var reg writerRegistry
		cond := objstore.Cond{IfAbsent: true}
		data, info, err := r.bucket.Get(ctx, writerRegistryKey, maxRegistryBytes, nil)
		switch {
		case err == nil:
			if err := json.Unmarshal(data, &reg); err != nil {
				return fmt.Errorf("writer registry %s: %w", writerRegistryKey, err)
			}
			cond = objstore.Cond{IfMatch: info.ETag}
		case !errors.Is(err, objstore.ErrNotExist):
			return fmt.Errorf("writer registry: %w", err)
		}
		if err := change(ctx, &reg); err != nil {
			return err
		}
		body, err := json.Marshal(&reg)
		if err != nil {
			return err
		}
		if len(body) > maxRegistryBytes {
			return fmt.Errorf("writer registry %s: more than %d bytes of writers", writerRegistryKey, maxRegistryBytes)
		}
		_, err = r.bucket.Put(ctx, writerRegistryKey, cond, body)
		if err == nil {
			return nil
		}
		if !errors.Is(err, objstore.ErrPrecondition) || try == registryRetries {
			return fmt.Errorf("writer registry: %w", err)
		}
		d := registryRetryDelay * time.Duration(1+rand.IntN(1<<min(try, 4))) // at most 0.8 s
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

// notePublishing adds snap to the registry's recent snapshots (and drops
// those older than recentKeep), before its manifest is put.
func (r *remote) notePublishing(ctx context.Context, snap store.Snapshot) error {
	now := r.bucket.ServerTime()
	return r.updateRegistry(ctx, func(_ context.Context, reg *writerRegistry) error {
		reg.Recent = slices.DeleteFunc(reg.Recent, func(c recentCommit) bool { return c.At.Add(recentKeep).Before(now) })
		reg.Recent = append(reg.Recent, recentCommit{Snapshot: snap.String(), At: now})
		return nil
	})
}

// register adds the writer lease key to the registry.
func (r *remote) register(ctx context.Context, key string) error {
	return r.updateRegistry(ctx, func(_ context.Context, reg *writerRegistry) error {
		if !slices.Contains(reg.Writers, key) {
			reg.Writers = append(reg.Writers, key)
		}
		return nil
	})
}

// unregister drops key from the registry (best effort: a GC drops the
// entry of a lease gone).
func (r *remote) unregister(ctx context.Context, key string) error {
	return r.updateRegistry(ctx, func(_ context.Context, reg *writerRegistry) error {
		reg.Writers = slices.DeleteFunc(reg.Writers, func(k string) bool { return k == key })
		return nil
	})
}

// registeredWriters reads the registry, proven current by a conditional
// write of it, and the live lease of each entry (by its key); entries
// whose lease is gone or expired are dropped by that write.
func (r *remote) registeredWriters(ctx context.Context) ([]objstore.LeaseInfo, []recentCommit, error) {
	var live []objstore.LeaseInfo
	var recent []recentCommit
	err := r.updateRegistry(ctx, func(ctx context.Context, reg *writerRegistry) error {
		live = live[:0]
		recent = reg.Recent
		keep := reg.Writers[:0]
		for _, key := range reg.Writers {
			li, err := objstore.ReadLease(ctx, r.bucket, key)
			if errors.Is(err, objstore.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("writer lease %s: %w", key, err)
			}
			if li.Expired {
				continue
			}
			keep = append(keep, key)
			live = append(live, li)
		}
		reg.Writers = keep
		return nil
	})
	return live, recent, err
}

// manifestThere tells whether the bucket holds snap's manifest, by a Get
// (its latest write): a HEAD may be answered by a stale cache, and what
// rides on the answer (building on a base, protecting a snapshot) must
// not rest on one.
func (r *remote) manifestThere(ctx context.Context, snap store.Snapshot) (bool, error) {
	_, err := r.bucket.GetTo(ctx, store.SnapshotFile(snap, store.ManifestName), store.MaxManifestBlob, io.Discard)
	if errors.Is(err, objstore.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
