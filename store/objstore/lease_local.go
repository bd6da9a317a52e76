package objstore

import (
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
)

// localNode names this machine's running kernel and PID namespace (its
// boot ID and the namespace's inode): processes with the same node see
// the same PIDs, so one can tell whether the other still runs. "" when
// unknown (then no lease is judged by its PID).
var localNode = sync.OnceValue(func() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	b := strings.TrimSpace(string(boot))
	if b == "" {
		return ""
	}
	return b + "/" + ns
})

// deadLocalHolder reports a lease written by a process of this node that
// no longer runs (killed, or ended without releasing it, as when the
// server was down): it can be taken over at once instead of after its
// TTL. The PID is the writer's own (objstore's, not the Holder's). A PID
// reused since by another process counts as alive: the lease then
// expires by its TTL as any other.
func deadLocalHolder(body *leaseBody) bool {
	if body == nil || body.Node == "" || body.Node != localNode() || body.PID <= 0 || body.PID == os.Getpid() {
		return false
	}
	return errors.Is(syscall.Kill(body.PID, 0), syscall.ESRCH)
}
