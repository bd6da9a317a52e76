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
	gofs "github.com/hanwen/go-fuse/v2/fs"
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
	return RootEntry{Name: JobsDirName, Mode: syscall.S_IFDIR, New: func() gofs.InodeEmbedder {
		return &jobsDir{m: m, uid: uid, gid: gid, textMode: textMode &^ 0o333, t: time.Now()}
	}}
}

type jobsDir struct {
	gofs.Inode
	readOnly
	m        *jobs.Manager
	uid, gid uint32
	textMode uint32 // permission bits of the status and log files
	t        time.Time
}

var _ gofs.NodeOnAdder = (*jobsDir)(nil)

// OnAdd builds the fixed tree: the kinds do not change while mounted.
func (d *jobsDir) OnAdd(ctx context.Context) {
	d.AddChild("status", d.NewPersistentInode(ctx, &jobText{d: d, text: d.allStatus},
		gofs.StableAttr{Mode: syscall.S_IFREG}), false)
	for _, kind := range d.m.Kinds() {
		kd := d.NewPersistentInode(ctx, &jobKindDir{d: d}, gofs.StableAttr{Mode: syscall.S_IFDIR})
		d.AddChild(kind, kd, false)
		kd.AddChild("control", kd.NewPersistentInode(ctx, &jobControl{d: d, kind: kind},
			gofs.StableAttr{Mode: syscall.S_IFREG}), false)
		kd.AddChild("status", kd.NewPersistentInode(ctx, &jobText{d: d, text: func() ([]byte, error) {
			st, err := d.m.Status(kind)
			if err != nil {
				return nil, err
			}
			return json.MarshalIndent(st, "", "  ")
		}}, gofs.StableAttr{Mode: syscall.S_IFREG}), false)
		kd.AddChild("log", kd.NewPersistentInode(ctx, &jobText{d: d, text: func() ([]byte, error) {
			j, ok := d.m.Job(kind)
			if !ok {
				return nil, nil
			}
			return []byte(strings.Join(j.Log(), "\n")), nil
		}, log: true}, gofs.StableAttr{Mode: syscall.S_IFREG}), false)
	}
}

func (d *jobsDir) allStatus() ([]byte, error) { return json.MarshalIndent(d.m.List(), "", "  ") }

func (d *jobsDir) fill(out *fuse.Attr, mode uint32) {
	out.Mode = mode
	out.Uid, out.Gid = d.uid, d.gid
	out.SetTimes(nil, &d.t, &d.t)
}

func (d *jobsDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.fill(&out.Attr, syscall.S_IFDIR|0o555)
	return 0
}

type jobKindDir struct {
	gofs.Inode
	readOnly
	d *jobsDir
}

func (k *jobKindDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	k.d.fill(&out.Attr, syscall.S_IFDIR|0o555)
	return 0
}

// jobText is a read-only file whose content is made when it is asked
// for: its size in every stat is the length of the current content, and
// its attributes expire at once, so `tail -f`, `less` and readers that
// trust the size see what is there now. It is served with direct I/O.
type jobText struct {
	gofs.Inode
	readOnly
	d    *jobsDir
	text func() ([]byte, error)
	log  bool // the text only grows at its end (a job's log, until its ring of lines wraps)
}

var _ gofs.NodeOpener = (*jobText)(nil)

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

func (t *jobText) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	b, err := t.content()
	if err != nil {
		return syscall.EIO
	}
	t.d.fill(&out.Attr, syscall.S_IFREG|t.d.textMode)
	out.Size = uint64(len(b))
	out.Blocks = (out.Size + 511) / 512
	out.SetTimeout(time.Nanosecond) // 0 would mean the mount's default
	return 0
}

func (t *jobText) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if e := openFlagsOK(flags); e != 0 {
		return nil, 0, e
	}
	b, err := t.content()
	if err != nil {
		return nil, 0, syscall.EIO
	}
	return &textHandle{t: t, data: b}, fuse.FOPEN_DIRECT_IO, 0
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

var _ gofs.FileReader = (*textHandle)(nil)

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

// lookupChild answers LOOKUP in the fixed directories of .jobs with the
// child's own attributes and their timeout (go-fuse's default lookup
// would give a status file's size the mount's hour-long attribute
// timeout).
func lookupChild(ctx context.Context, parent *gofs.Inode, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ch := parent.GetChild(name)
	if ch == nil {
		return nil, syscall.ENOENT
	}
	if g, ok := ch.Operations().(gofs.NodeGetattrer); ok {
		var ao fuse.AttrOut
		if e := g.Getattr(ctx, nil, &ao); e != 0 {
			return nil, e
		}
		out.Attr = ao.Attr
		out.AttrValid, out.AttrValidNsec = ao.AttrValid, ao.AttrValidNsec
	}
	return ch, 0
}

func (d *jobsDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return lookupChild(ctx, &d.Inode, name, out)
}

func (k *jobKindDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return lookupChild(ctx, &k.Inode, name, out)
}

// jobControl is .jobs/<kind>/control: each line written is a command.
type jobControl struct {
	gofs.Inode
	readOnly
	d    *jobsDir
	kind string
}

var (
	_ gofs.NodeOpener    = (*jobControl)(nil)
	_ gofs.NodeSetattrer = (*jobControl)(nil)
	_ gofs.FileWriter    = (*controlHandle)(nil)
)

func (c *jobControl) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	c.d.fill(&out.Attr, syscall.S_IFREG|0o200)
	return 0
}

// Setattr accepts the truncation of `echo cmd > control` and nothing else.
func (c *jobControl) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if in.Valid&^(fuse.FATTR_SIZE|fuse.FATTR_FH|fuse.FATTR_LOCKOWNER) != 0 || in.Size != 0 {
		return syscall.EPERM
	}
	c.d.fill(&out.Attr, syscall.S_IFREG|0o200)
	return 0
}

func (c *jobControl) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if flags&syscall.O_ACCMODE == syscall.O_RDONLY {
		return nil, 0, syscall.EACCES
	}
	return &controlHandle{c: c}, fuse.FOPEN_DIRECT_IO, 0
}

type controlHandle struct{ c *jobControl }

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
