package layout

import (
	"context"
	"time"
)

// RefreshStore has the store refresh what it keeps of snapshots from
// elsewhere (store.Store.Refresh: a remote store's mirror of its bucket;
// nothing for a local store) every interval until ctx ends; the
// listings then show it once stale. A failed refresh is logged; the
// mount serves what it has.
func (l *Layout) RefreshStore(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := l.Store.Refresh(ctx); err != nil && ctx.Err() == nil {
			l.log().Warn("refresh of the store failed", "store", l.Store.Root(), "err", err)
		}
	}
}
