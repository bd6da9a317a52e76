package cli

import (
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/browse"
)

// maxCompletions bounds the candidates one completion offers.
const maxCompletions = 1000

// archiveCompletions returns the paths inside file archive name of
// snapshot ref (ns/… or taken in namespace ns) that complete toComplete,
// for shell completion (cobra's ValidArgsFunction): see browse.Complete. It
// reads the archive's metadata only, through a small cache.
func (a *app) archiveCompletions(ns, ref, name, toComplete string) ([]string, error) {
	ref, err := qualifyRef(ns, ref)
	if err != nil {
		return nil, err
	}
	var out []string
	err = a.withArchiveMeta(ref, name, 8<<20, func(acc *pxar.Accessor, _ store.Snapshot, _ store.Archive) error {
		out, err = browse.Complete(a.ctx, acc, toComplete, maxCompletions)
		return err
	})
	return out, err
}
