package fs

import (
	"context"
	"time"
)

// refreshStore has the store refresh what it keeps of snapshots from
// elsewhere (store.Store.Refresh: a remote store's mirror of its bucket;
// nothing for a local store) every interval (Options.StoreRefresh)
// until ctx ends. A failed refresh is logged; the mount serves what it
// has.
func (f *mountFS) refreshStore(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := f.s.Refresh(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("refresh of the store failed", "store", f.s.Root(), "err", err)
		}
	}
}
