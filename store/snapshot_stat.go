package store

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// statWorkers bounds the stats of one group's listing in flight: on a
// cold cache each stat of a snapshot's manifest reads the snapshot's
// directory from the disk, and a disk answers many reads at once about
// as fast as one.
const (
	statWorkers  = 16
	statParallel = 8 // fewer snapshots are stat'ed in turn
)

// statSnapshots fills each info's Finished, Protected and manifest key
// from two stats relative to the group's directory fd, in parallel.
func statSnapshots(fd int, names []string, out []SnapshotInfo) {
	n := min(statWorkers, len(out))
	if len(out) < statParallel {
		n = 1
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= len(out) {
				return
			}
			statSnapshot(fd, names[i], &out[i])
		}
	}
	var wg sync.WaitGroup
	for range n - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

func statSnapshot(fd int, name string, info *SnapshotInfo) {
	var st unix.Stat_t
	if info.Finished = fstatat(fd, name+"/"+ManifestName, &st, 0) == nil; info.Finished {
		info.manifest = fileKeyOf(&st)
	}
	info.Protected = fstatat(fd, name+"/"+ProtectedName, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}
