package jobs

import (
	"fmt"
	"path/filepath"
)

// Chunk read orders of the kinds that read every chunk of a selection
// (verify, tape-export); OrderAuto picks by the store's disk (see
// PathRotational).
const (
	OrderAuto  = "auto"
	OrderInode = "inode"
	OrderIndex = "index"
)

// ChunkOrder resolves order for the store whose root is root, reading
// sysfs at sysfs: OrderAuto becomes inode order on a rotational disk and
// index order otherwise (also when the disk cannot be told). why says how
// the order was chosen, for the job's log and report.
func ChunkOrder(order, sysfs, root string) (resolved, why string) {
	if order != OrderAuto {
		return order, "asked for"
	}
	rot, how, err := PathRotational(sysfs, filepath.Join(root, ".chunks"))
	switch {
	case err != nil:
		return OrderIndex, fmt.Sprintf("cannot tell whether the store's disk is rotational (%v); using index order", err)
	case rot:
		return OrderInode, how + ": rotational disk, sorting chunks by inode"
	}
	return OrderIndex, how + ": not rotational, reading chunks in index order"
}
