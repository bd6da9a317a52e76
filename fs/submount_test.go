package fs

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSplitMount checks root's split mode: the store on a read-only
// superblock that is read without OPEN and without a GETATTR after each
// read, an extra entry on its own read-write mount, and both gone after
// an unmount of the mountpoint.
func TestSplitMount(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("split mode needs root (mount(2)); without it a mount is one read-write mount, tested by the other tests")
	}
	f := testFixture(t)
	extra := RootEntry{Name: "ctl", Mode: syscall.S_IFDIR, New: func() Node { return (&mountFS{}).emptyDir(inoOf("ctl")) }}
	srv, mnt, logs := mountT(t, Options{Debug: true, Extra: []RootEntry{extra}})
	var st unix.Statfs_t
	if err := unix.Statfs(mnt, &st); err != nil || st.Flags&unix.ST_RDONLY == 0 {
		t.Errorf("store mount: flags %#x (%v), want read-only", st.Flags, err)
	}
	sub := filepath.Join(mnt, "ctl")
	if typ, ok := mountedAt(sub); !ok || typ != fsType {
		t.Fatalf("%s: not a cairn mount (%q)", sub, typ)
	}
	if err := unix.Statfs(sub, &st); err != nil || st.Flags&unix.ST_RDONLY != 0 {
		t.Errorf("extra entry's mount: flags %#x (%v), want read-write", st.Flags, err)
	}

	// requests of the store's nodes (go-fuse's own poll probe is node ^0)
	count := func(op string) int {
		n := 0
		for _, m := range regexp.MustCompile(`rx \d+: `+op+` n(\d+) `).FindAllStringSubmatch(logs.String(), -1) {
			if m[1] != "18446744073709551615" {
				n++
			}
		}
		return n
	}
	n := 0
	for rel, want := range f.files {
		if rel == statsName {
			continue
		}
		got, err := os.ReadFile(filepath.Join(mnt, rel))
		if err != nil || string(got) != string(want) {
			t.Fatalf("%s: %d bytes (%v), want %d", rel, len(got), err, len(want))
		}
		n++
	}
	if opens := count("OPEN"); n < 2 || opens > 1 {
		t.Errorf("%d files read with %d OPEN requests, want at most the first", n, opens)
	}
	// GETATTRs of the files: the changing listings above them (the
	// root, groups) have attributes that expire with Refresh (their
	// mtime is when they changed, noopendir.go), so a slow run asks
	// for those again; a file's must never be asked for again.
	fileGetattrs := func() (int, int) {
		files := map[string]bool{}
		for _, m := range regexp.MustCompile(`tx \d+: +OK, \{n(\d+) g\d+ [^{]*\{M0100`).FindAllStringSubmatch(logs.String(), -1) {
			files[m[1]] = true
		}
		n := 0
		for _, m := range regexp.MustCompile(`rx \d+: GETATTR n(\d+) `).FindAllStringSubmatch(logs.String(), -1) {
			if files[m[1]] {
				n++
			}
		}
		return n, len(files)
	}
	getattrs, seen := fileGetattrs()
	if seen < n {
		t.Fatalf("the debug log shows %d file entries, %d files were read", seen, n)
	}
	for rel := range f.files {
		if rel != statsName {
			if _, err := os.Stat(filepath.Join(mnt, rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if now, _ := fileGetattrs(); now != getattrs {
		more := now - getattrs
		t.Errorf("stat of %d files read before sent %d GETATTR requests, want none", n, more)
	}

	if err := Unmount(mnt, false); err != nil {
		t.Fatalf("unmount: %v", err)
	}
	<-srv.Done()
	for _, d := range []string{sub, mnt} {
		if _, ok := mountedAt(d); ok {
			t.Errorf("%s still mounted", d)
		}
	}
	if err := Unmount(mnt, false); !errors.Is(err, ErrNotMounted) {
		t.Errorf("second unmount: %v, want ErrNotMounted", err)
	}
}
