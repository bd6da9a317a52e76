package jobs

import (
	"fmt"

	"github.com/cairnfs/cairn/store"
)

// Chunk read orders of the kinds that read every chunk of a selection
// (verify, tape-export); OrderAuto picks by the store's disk (see
// PathRotational).
const (
	OrderAuto  = "auto"
	OrderInode = "inode"
	OrderIndex = "index"
)

// ChunkOrder resolves order for store s, reading sysfs at sysfs:
// OrderAuto becomes inode order on a rotational disk and index order
// otherwise (also when the disk cannot be told). A store whose chunks
// are on no local disk (in a bucket) is read in index order whatever
// was asked: inodes mean nothing there. why says how the order was
// chosen, for the job's log and report.
func ChunkOrder(order, sysfs string, s *store.Store) (resolved, why string) {
	dir, onDisk := s.ChunkDiskDir()
	if !onDisk {
		return OrderIndex, "the store's chunks are in a bucket, on no local disk: reading chunks in index order"
	}
	if order != OrderAuto {
		return order, "asked for"
	}
	rot, how, err := PathRotational(sysfs, dir)
	switch {
	case err != nil:
		return OrderIndex, fmt.Sprintf("cannot tell whether the store's disk is rotational (%v); using index order", err)
	case rot:
		return OrderInode, how + ": rotational disk, sorting chunks by inode"
	}
	return OrderIndex, how + ": not rotational, reading chunks in index order"
}
