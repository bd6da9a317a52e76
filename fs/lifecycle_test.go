package fs

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/index"
)

// TestUnmountUnderLoad unmounts while readers open, read and hold files:
// Unmount returns, serving stops, no mount is left, every reader ends.
func TestUnmountUnderLoad(t *testing.T) {
	f := testFixture(t)
	srv, mnt, _ := mountT(t, Options{UnmountGrace: 200 * time.Millisecond})
	rels := keys(f.files)
	started := make(chan struct{}, 12)
	unmounted := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 12 {
		p := filepath.Join(mnt, rels[i%len(rels)])
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			once := sync.OnceFunc(func() { started <- struct{}{} })
			defer once()
			for {
				fh, err := os.Open(p)
				if err != nil {
					return
				}
				for off := int64(0); ; off += int64(len(buf)) {
					_, err = fh.ReadAt(buf, off)
					once()
					if err != nil {
						break
					}
				}
				if i%2 == 0 {
					// Half the readers keep their file open (reading
					// what the kernel may keep cached), so the mount is
					// busy: Unmount must detach and then abort.
					for err == nil || errors.Is(err, io.EOF) {
						select {
						case <-unmounted:
							fh.Close()
							return
						default:
						}
						_, err = fh.ReadAt(buf, 0)
					}
				}
				fh.Close()
			}
		})
	}
	for range 12 {
		<-started
	}
	if err := srv.Unmount(); err != nil {
		t.Errorf("unmount under load: %v", err)
		abortConn(srv.dev)
	}
	<-srv.Done()
	close(unmounted)
	wg.Wait()
	if _, ok := mountedAt(mnt); ok {
		t.Errorf("%s is still mounted", mnt)
	}
	if _, err := os.ReadDir(mnt); err != nil {
		t.Errorf("mountpoint unusable after unmount: %v", err)
	}
}

// TestExternalUnmount unmounts with the package's Unmount (as cairn umount
// does): busy while a file is open, lazy detach works, serving stops.
func TestExternalUnmount(t *testing.T) {
	srv, mnt, _ := mountT(t, Options{})
	fh, err := os.Open(filepath.Join(mnt, "vm/100/latest/disk.img"))
	if err != nil {
		t.Fatal(err)
	}
	if err := Unmount(mnt, false); !errors.Is(err, ErrBusy) {
		t.Errorf("unmount with an open file: %v, want ErrBusy", err)
	}
	if err := Unmount(mnt, true); err != nil {
		t.Fatalf("lazy unmount: %v", err)
	}
	if _, err := fh.ReadAt(make([]byte, 10), 0); err != nil {
		t.Errorf("an open file stops working after a lazy unmount: %v", err)
	}
	fh.Close()
	<-srv.Done()
	if err := Unmount(mnt, false); !errors.Is(err, ErrNotMounted) {
		t.Errorf("unmount of a plain directory: %v, want ErrNotMounted", err)
	}
}

// TestMountErrors checks that bad mountpoints and scopes are refused with
// a clear error.
func TestMountErrors(t *testing.T) {
	needFUSE(t)
	f := testFixture(t)
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	_, busy, _ := mountT(t, Options{})
	nope := store.Snapshot{Group: store.Group{Type: "vm", ID: "100"}, Time: t0.Add(99 * time.Hour)}
	unfinished := store.Snapshot{Group: store.Group{Type: "vm", ID: "100"}, Time: t0.Add(3 * time.Hour)}
	tests := []struct {
		name  string
		dir   string
		scope Scope
		want  error
	}{
		{"inside the store", filepath.Join(f.s.Root(), "vm"), Scope{}, ErrBadMountpoint},
		{"the store itself", f.s.Root(), Scope{}, ErrBadMountpoint},
		{"holds the store", filepath.Dir(f.s.Root()), Scope{}, ErrBadMountpoint},
		{"a file", file, Scope{}, ErrBadMountpoint},
		{"missing", filepath.Join(t.TempDir(), "missing"), Scope{}, ErrBadMountpoint},
		{"already mounted", busy, Scope{}, ErrBusy},
		{"unknown namespace", t.TempDir(), Scope{NS: "nope"}, store.ErrNotFound},
		{"bad namespace", t.TempDir(), Scope{NS: "../x"}, store.ErrBadName},
		{"unknown snapshot", t.TempDir(), Scope{Snapshot: &nope}, store.ErrNotFound},
		{"unfinished snapshot", t.TempDir(), Scope{Snapshot: &unfinished}, store.ErrUnfinished},
	}
	for _, tt := range tests {
		srv, err := Mount(context.Background(), tt.dir, Options{Store: f.s, Scope: tt.scope})
		if err == nil {
			srv.Unmount()
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

// TestErrno checks the mapping of store errors to what FUSE returns.
func TestErrno(t *testing.T) {
	chunkErr := &chunkcache.ReadError{Path: "x.fidx", Offset: 4096, Digest: "ab", Err: store.ErrMissingChunk}
	tests := []struct {
		err  error
		want syscall.Errno
	}{
		{nil, 0},
		{context.Canceled, syscall.EINTR},
		{&chunkcache.ReadError{Err: context.Canceled}, syscall.EINTR},
		{store.ErrNotFound, syscall.ENOENT},
		{os.ErrNotExist, syscall.ENOENT},
		{chunkErr, syscall.EIO},
		{&chunkcache.ReadError{Err: errors.Join(store.ErrMissingChunk, os.ErrNotExist)}, syscall.EIO},
		{store.ErrCorruptChunk, syscall.EIO},
		{index.ErrFormat, syscall.EIO},
		{errors.New("disk on fire"), syscall.EIO},
	}
	for _, tt := range tests {
		if got := errno(tt.err); got != tt.want {
			t.Errorf("errno(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestDeadMount leaves a mount whose server is gone, as a crash does:
// mounting there says so, and Unmount clears it.
func TestDeadMount(t *testing.T) {
	srv, mnt, _ := mountT(t, Options{})
	if err := abortConn(srv.dev); err != nil {
		t.Fatal(err)
	}
	<-srv.Done()
	if _, err := os.ReadDir(mnt); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("readdir of a dead mount: %v, want ENOTCONN", err)
	}
	_, err := Mount(t.Context(), mnt, Options{Store: testFixture(t).s})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "dead FUSE mount") {
		t.Errorf("mount on a dead mount: %v, want ErrBusy naming cairn umount", err)
	}
	if err := Unmount(mnt, false); err != nil {
		t.Fatalf("unmount of a dead mount: %v", err)
	}
	if _, ok := mountedAt(mnt); ok {
		t.Errorf("%s still mounted", mnt)
	}
}
