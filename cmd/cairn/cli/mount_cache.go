package cli

import (
	"os"
	"strconv"
	"strings"

	"github.com/cairnfs/cairn/store/chunkcache"
	"golang.org/x/sys/unix"
)

// The mount's default cache size. A VM image's working set (the chunks
// random reads keep coming back to) is often larger than 256 MiB: the
// ext4 image of the benchmark reads 75 chunks, 300 MiB decoded, and
// every miss decodes a whole 4 MiB chunk for a 4 KiB read. So the
// default grows with the memory the machine (or the cgroup) allows:
// 1/32 of it, at least chunkcache.DefaultSize and at most
// maxDefaultMountCache. --cache-size always wins; .stats shows the size.
const (
	maxDefaultMountCache = 1 << 30
	mountCacheShare      = 32
)

// defaultMountCache returns the default cache of a mount on a machine
// whose memory budget is mem bytes (0: unknown).
func defaultMountCache(mem uint64) int64 {
	return min(max(int64(mem/mountCacheShare), chunkcache.DefaultSize), maxDefaultMountCache)
}

// memoryBudget returns the RAM, or the cgroup's memory.max when that is
// less; 0 if neither can be read.
func memoryBudget() uint64 {
	var si unix.Sysinfo_t
	var ram uint64
	if unix.Sysinfo(&si) == nil {
		ram = uint64(si.Totalram) * uint64(si.Unit)
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		if lim, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64); err == nil && (ram == 0 || lim < ram) {
			return lim // "max" (no limit) does not parse
		}
	}
	return ram
}
