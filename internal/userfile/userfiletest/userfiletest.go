// Package userfiletest makes, for tests, one path of each kind that
// package userfile refuses, so its unit tests and the binary's end-to-end
// tests try the same set.
package userfiletest

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// NotRegular makes, in a new temporary directory, a FIFO, a symlink to
// it, a directory and a listening Unix socket, and adds /dev/zero; it
// returns each path with the kind an error names it by ("a FIFO").
func NotRegular(t testing.TB) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	link := filepath.Join(dir, "link-to-fifo")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	return map[string]string{fifo: "a FIFO", link: "a FIFO", sub: "a directory", "/dev/zero": "a character device", sock: "a socket"}
}
