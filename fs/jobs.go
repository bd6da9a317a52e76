package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// JobsDirName is the control tree's name at the root of the mount.
const JobsDirName = ".jobs"

// JobsEntry returns the .jobs control tree of m, in the manner of sysfs:
// .jobs/<kind>/control (write "start key=value …" or "cancel"),
// .jobs/<kind>/status (JSON of the current or last job), .jobs/<kind>/log
// and .jobs/status (all kinds). Everything belongs to uid/gid. control
// has mode 0200, so only the mounting user (and root) may write it; a
// refused command fails the write with EINVAL and status says why. The
// status and log files have textMode (read bits; 0: DefaultStatusMode,
// 0400): they name snapshots, paths and errors, which the store's other
// users need not see when the mount allows them in.
func JobsEntry(m *jobs.Manager, uid, gid, textMode uint32) RootEntry {
	if textMode == 0 {
		textMode = DefaultStatusMode
	}
	return RootEntry{Name: JobsDirName, Mode: syscall.S_IFDIR, New: func() Node {
		return newJobsDir(&jobsAttr{m: m, uid: uid, gid: gid, textMode: textMode &^ 0o333, t: time.Now()})
	}}
}

// jobsAttr is what the nodes of one .jobs tree share.
type jobsAttr struct {
	m        *jobs.Manager
	uid, gid uint32
	textMode uint32 // permission bits of the status and log files
	t        time.Time
}

// newJobsDir builds the fixed tree: the kinds do not change while
// mounted.
func newJobsDir(d *jobsAttr) *fixedDir {
	ino := func(parts ...string) uint64 { return inoOf(append([]string{JobsDirName}, parts...)...) }
	top := &fixedDir{ino: ino(), fill: d.fill}
	top.add("status", ino("status"), &jobText{d: d, ino: ino("status"), text: d.allStatus})
	for _, kind := range d.m.Kinds() {
		kd := &fixedDir{ino: ino(kind), fill: d.fill}
		top.add(kind, kd.ino, kd)
		kd.add("control", ino(kind, "control"), &jobControl{d: d, ino: ino(kind, "control"), kind: kind})
		kd.add("status", ino(kind, "status"), &jobText{d: d, ino: ino(kind, "status"), text: func() ([]byte, error) {
			st, err := d.m.Status(kind)
			if err != nil {
				return nil, err
			}
			return json.MarshalIndent(st, "", "  ")
		}})
		kd.add("log", ino(kind, "log"), &jobText{d: d, ino: ino(kind, "log"), text: func() ([]byte, error) {
			j, ok := d.m.Job(kind)
			if !ok {
				return nil, nil
			}
			return []byte(strings.Join(j.Log(), "\n")), nil
		}, log: true})
	}
	return top
}

func (d *jobsAttr) allStatus() ([]byte, error) { return json.MarshalIndent(d.m.List(), "", "  ") }

func (d *jobsAttr) fill(out *fuse.Attr, mode uint32) {
	out.Mode = mode
	out.Uid, out.Gid = d.uid, d.gid
	out.SetTimes(nil, &d.t, &d.t)
}

// jobText is a read-only file whose content is made when it is asked
// for: its size in every stat is the length of the current content, and
// its attributes expire at once, so `tail -f`, `less` and readers that
// trust the size see what is there now. It is served with direct I/O.
type jobText struct {
	d    *jobsAttr
	ino  uint64
	text func() ([]byte, error)
	log  bool // the text only grows at its end (a job's log, until its ring of lines wraps)
}

var _ fileNode = (*jobText)(nil)

// content is the current text, ending with a newline unless empty.
func (t *jobText) content() ([]byte, error) {
	b, err := t.text()
	if err != nil {
		return nil, err
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return b, nil
}

func (t *jobText) getattr(c *call, out *fuse.AttrOut) syscall.Errno {
	b, err := t.content()
	if err != nil {
		return syscall.EIO
	}
	t.d.fill(&out.Attr, syscall.S_IFREG|t.d.textMode)
	out.Ino = t.ino
	out.Size = uint64(len(b))
	out.Blocks = (out.Size + 511) / 512
	out.SetTimeout(time.Nanosecond) // 0 would mean the mount's default
	return 0
}

func (t *jobText) open(c *call, flags uint32) (fileHandle, uint32, syscall.Errno) {
	if e := openFlagsOK(flags); e != 0 {
		return nil, 0, e
	}
	b, err := t.content()
	if err != nil {
		return nil, 0, syscall.EIO
	}
	return &textHandle{t: t, data: b}, fuse.FOPEN_DIRECT_IO, 0
}

// read without a handle (never sent: .jobs is not in no-open mode) reads
// the current content.
func (t *jobText) read(c *call, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return (&textHandle{t: t}).Read(c.ctx, dest, off)
}

// textHandle serves one open of a jobText: a read from the start takes
// the current content, so each read(2) of a whole file is one consistent
// document (a status); in a log, which only grows at its end, a read at
// or past the end of what the handle holds takes it too, so a reader
// waiting at the end (tail -f) gets the lines added since.
type textHandle struct {
	t    *jobText
	mu   sync.Mutex
	data []byte
}

var _ fileHandle = (*textHandle)(nil)

func (h *textHandle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if off == 0 || h.t.log && off >= int64(len(h.data)) {
		b, err := h.t.content()
		if err != nil {
			return nil, syscall.EIO
		}
		h.data = b
	}
	if off >= int64(len(h.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(off+int64(len(dest)), int64(len(h.data)))
	return fuse.ReadResultData(h.data[off:end]), 0
}

// jobControl is .jobs/<kind>/control: each line written is a command.
type jobControl struct {
	d    *jobsAttr
	ino  uint64
	kind string
}

var (
	_ fileNode     = (*jobControl)(nil)
	_ setattrNode  = (*jobControl)(nil)
	_ handleWriter = (*controlHandle)(nil)
)

func (c *jobControl) getattr(_ *call, out *fuse.AttrOut) syscall.Errno {
	c.d.fill(&out.Attr, syscall.S_IFREG|0o200)
	out.Ino = c.ino
	return 0
}

// setattr accepts the truncation of `echo cmd > control` and nothing else.
func (c *jobControl) setattr(_ *call, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if in.Valid&^(fuse.FATTR_SIZE|fuse.FATTR_FH|fuse.FATTR_LOCKOWNER) != 0 || in.Size != 0 {
		return syscall.EPERM
	}
	return c.getattr(nil, out)
}

func (c *jobControl) open(_ *call, flags uint32) (fileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	return &controlHandle{c: c}, fuse.FOPEN_DIRECT_IO, 0
}

// read: control is write-only (its mode, and open refuses O_RDONLY).
func (c *jobControl) read(*call, []byte, int64) (fuse.ReadResult, syscall.Errno) {
	return nil, syscall.EBADF
}

type controlHandle struct{ c *jobControl }

func (h *controlHandle) Read(context.Context, []byte, int64) (fuse.ReadResult, syscall.Errno) {
	return nil, syscall.EBADF
}

// Write runs each line as a command; a refused one fails the write.
func (h *controlHandle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if _, err := h.c.d.m.Control(h.c.kind, string(line)); err != nil {
			if errors.Is(err, jobs.ErrRunning) {
				return 0, syscall.EBUSY
			}
			return 0, syscall.EINVAL
		}
	}
	return uint32(len(data)), 0
}
