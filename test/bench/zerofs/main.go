// Command zerofs is the floor of a read through a go-fuse mount on this
// machine, for test/bench/mount-floor.sh: one read-only file of SIZE zero
// bytes, each READ answered from one shared buffer (no decoding, no
// hashing, no cache), with the mount options cairn's mount uses (1 MiB
// requests, 4 MiB of kernel read-ahead, FOPEN_KEEP_CACHE, no splice). A
// cold read of it costs what any FUSE server pays: the kernel's page
// fill, the copy through /dev/fuse and go-fuse's request loop.
//
//	zerofs MOUNTPOINT SIZE     (serves MOUNTPOINT/zero.img until unmounted)
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

const request = 1 << 20 // cairn's fs.maxRequest

var zeros = make([]byte, request)

type root struct{ gofs.Inode }

type file struct {
	gofs.Inode
	size int64
}

var (
	_ gofs.NodeGetattrer = (*file)(nil)
	_ gofs.NodeOpener    = (*file)(nil)
	_ gofs.NodeReader    = (*file)(nil)
)

func (f *file) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = uint64(f.size)
	return 0
}

func (f *file) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *file) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := min(int64(len(dest)), f.size-off)
	if n <= 0 {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(zeros[:n]), 0
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: zerofs MOUNTPOINT SIZE")
		os.Exit(2)
	}
	size, err := strconv.ParseInt(os.Args[2], 10, 64)
	if err != nil || size < 0 {
		fmt.Fprintln(os.Stderr, "zerofs: bad size", os.Args[2])
		os.Exit(2)
	}
	r := &root{}
	opts := &gofs.Options{
		OnAdd: func(ctx context.Context) {
			ch := r.NewPersistentInode(ctx, &file{size: size}, gofs.StableAttr{Mode: syscall.S_IFREG})
			r.AddChild("zero.img", ch, false)
		},
		MountOptions: fuse.MountOptions{
			FsName: "zerofs", Name: "zerofs", MaxWrite: request, MaxReadAhead: request,
			MaxBackground: 64, DisableSplice: true, DirectMountStrict: true,
		},
	}
	s, err := gofs.Mount(os.Args[1], r, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zerofs:", err)
		os.Exit(1)
	}
	// cairn sets the mount's read_ahead_kb to 4096 (fs.Options.ReadAheadKB).
	var st unix.Stat_t
	if unix.Stat(os.Args[1], &st) == nil {
		path := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
		if err := os.WriteFile(path, []byte("4096"), 0); err != nil {
			fmt.Fprintln(os.Stderr, "zerofs: read_ahead_kb:", err)
		}
	}
	s.Wait()
}
