package jobs

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// UPID is a job id in the form Proxmox uses for tasks:
//
//	UPID:node:PID:PSTART:TASKID:STARTTIME:type:id:user:
//
// with PID, PSTART (here 0), TASKID and STARTTIME in upper-case hex. It
// is what a manifest's verify_state.upid records.
type UPID struct {
	Node     string
	PID      int
	TaskID   uint32
	Start    time.Time
	Type     string
	WorkerID string
	User     string
}

var taskCounter atomic.Uint32

// newUPID makes the id of a new job of kind on the store named storeName.
func newUPID(kind, storeName string) UPID {
	node, err := os.Hostname()
	if err != nil || node == "" {
		node = "localhost"
	}
	name := "root"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return UPID{Node: node, PID: os.Getpid(), TaskID: taskCounter.Add(1), Start: time.Now(),
		Type: kind, WorkerID: storeName, User: name + "@pam"}
}

// String formats the UPID. Colons in free-form fields are escaped as
// "\x3a", as Proxmox does.
func (u UPID) String() string {
	esc := func(s string) string { return strings.ReplaceAll(s, ":", `\x3a`) }
	return fmt.Sprintf("UPID:%s:%08X:%08X:%08X:%08X:%s:%s:%s:", esc(u.Node), u.PID, 0, u.TaskID,
		u.Start.Unix(), esc(u.Type), esc(u.WorkerID), esc(u.User))
}

// ParseUPID parses a UPID string.
func ParseUPID(s string) (UPID, error) {
	f := strings.Split(s, ":")
	if len(f) != 10 || f[0] != "UPID" || f[9] != "" {
		return UPID{}, fmt.Errorf("UPID %q: want UPID:node:pid:pstart:task:start:type:id:user: (ten fields, the last empty)", s)
	}
	var n [4]uint64
	for i := range n {
		v, err := strconv.ParseUint(f[2+i], 16, 64)
		if err != nil {
			return UPID{}, fmt.Errorf("UPID %q: field %d %q is not hex", s, 2+i, f[2+i])
		}
		n[i] = v
	}
	unesc := func(s string) string { return strings.ReplaceAll(s, `\x3a`, ":") }
	return UPID{Node: unesc(f[1]), PID: int(n[0]), TaskID: uint32(n[2]), Start: time.Unix(int64(n[3]), 0),
		Type: unesc(f[6]), WorkerID: unesc(f[7]), User: unesc(f[8])}, nil
}
