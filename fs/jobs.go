package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
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
// and .jobs/status (all kinds). control belongs to uid/gid with mode 0200,
// so only the mounting user (and root) may write it; a refused command
// fails the write with EINVAL and status says why.
func JobsEntry(m *jobs.Manager, uid, gid uint32) RootEntry {
	return RootEntry{Name: JobsDirName, Mode: syscall.S_IFDIR, New: func() gofs.InodeEmbedder {
		return &jobsDir{m: m, uid: uid, gid: gid, t: time.Now()}
	}}
}

type jobsDir struct {
	gofs.Inode
	readOnly
	m        *jobs.Manager
	uid, gid uint32
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
		}}, gofs.StableAttr{Mode: syscall.S_IFREG}), false)
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

// jobText is a read-only file whose content is made at each open and
// served with direct I/O, so a reader always sees the current state.
type jobText struct {
	gofs.Inode
	readOnly
	d    *jobsDir
	text func() ([]byte, error)
}

func (t *jobText) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	t.d.fill(&out.Attr, syscall.S_IFREG|0o444)
	return 0
}

func (t *jobText) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	if e := openFlagsOK(flags); e != 0 {
		return nil, 0, e
	}
	b, err := t.text()
	if err != nil {
		return nil, 0, syscall.EIO
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		b = append(b, '\n')
	}
	return &bytesHandle{data: b}, fuse.FOPEN_DIRECT_IO, 0
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
