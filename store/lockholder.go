package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store/internal/printable"
	"golang.org/x/sys/unix"
)

// LockHolder is a process that holds a lock.
type LockHolder struct {
	Host    string // the holder's host, for a lease in a bucket ("" for a local lock)
	PID     int
	Command string    // its command line (shortened), "" when unknown
	Started time.Time // zero when unknown
}

func (h LockHolder) String() string {
	s := "PID " + strconv.Itoa(h.PID)
	if h.Command != "" {
		s += " (" + h.Command
		if !h.Started.IsZero() {
			s += ", started " + h.Started.UTC().Format(time.RFC3339)
		}
		s += ")"
	}
	if h.Host != "" {
		s += " on host " + h.Host
	}
	return s
}

// maxHolderRecord bounds what is read of a lock file's holder record.
const maxHolderRecord = 512

// recordHolder writes this process into the lock file it holds
// exclusively ("pid=N start=T cmd=…"), for those that cannot see it in
// /proc/locks (another PID namespace). Failing to is harmless.
func recordHolder(f *os.File) {
	me := DescribeProcess(os.Getpid())
	rec := fmt.Sprintf("pid=%d start=%d cmd=%s\n", me.PID, me.Started.Unix(), me.Command)
	if f.Truncate(0) == nil {
		f.WriteAt([]byte(rec), 0)
	}
}

// lockHolders returns the processes /proc/locks shows holding a flock on
// f's file; when it shows none, the holder the file records, if that
// process still runs.
func lockHolders(f *os.File) []LockHolder {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return nil
	}
	var out []LockHolder
	for _, pid := range flockPIDs(st.Dev, st.Ino) {
		out = append(out, DescribeProcess(pid))
	}
	if len(out) > 0 {
		return out
	}
	buf := make([]byte, maxHolderRecord)
	n, _ := f.ReadAt(buf, 0)
	var pid int
	var start int64
	if _, err := fmt.Sscanf(string(buf[:n]), "pid=%d start=%d", &pid, &start); err != nil || pid <= 0 {
		return nil
	}
	if h := DescribeProcess(pid); h.Command != "" && h.Started.Unix() == start {
		return []LockHolder{h}
	}
	return nil
}

// flockPIDs returns the PIDs /proc/locks names as holding a FLOCK on the
// file dev/ino (waiters, the "->" lines, are left out).
func flockPIDs(dev, ino uint64) []int {
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return nil
	}
	want := fmt.Sprintf("%02x:%02x:%d", unix.Major(dev), unix.Minor(dev), ino)
	var pids []int
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// 1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] != "FLOCK" || f[5] != want {
			continue
		}
		if pid, err := strconv.Atoi(f[4]); err == nil && pid > 0 {
			pids = append(pids, pid)
		}
	}
	return pids
}

// DescribeProcess reads a process's command line and start time from
// /proc; what cannot be read stays empty.
func DescribeProcess(pid int) LockHolder {
	h := LockHolder{PID: pid}
	p := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(p + "/cmdline"); err == nil {
		h.Command = printable.String(strings.TrimSpace(string(bytes.ReplaceAll(b, []byte{0}, []byte{' '}))), printable.MaxCommand)
	}
	if b, err := os.ReadFile(p + "/stat"); err == nil {
		h.Started = processStart(b)
	}
	return h
}

// processStart reads starttime (field 22, clock ticks after boot) from a
// /proc/PID/stat line; the command (field 2) may hold spaces and parens.
func processStart(stat []byte) time.Time {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return time.Time{}
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 20 {
		return time.Time{}
	}
	ticks, err := strconv.ParseUint(f[19], 10, 64)
	boot := bootTime()
	if err != nil || boot.IsZero() {
		return time.Time{}
	}
	const userHZ = 100 // what the kernel reports times in to user space
	return boot.Add(time.Duration(ticks) * (time.Second / userHZ))
}

// bootTime is btime of /proc/stat.
func bootTime() time.Time {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return time.Unix(s, 0)
			}
		}
	}
	return time.Time{}
}
