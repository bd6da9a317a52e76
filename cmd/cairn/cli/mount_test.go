package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestMountCommand runs cairn init, backup, mount, umount in-process on a
// real mount.
func TestMountCommand(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CAIRN_TEST_REQUIRE_FUSE") == "1" {
			t.Fatalf("FUSE required (CAIRN_TEST_REQUIRE_FUSE=1) but /dev/fuse is missing: %v", err)
		}
		t.Skipf("skipping real-mount test: /dev/fuse is missing (%v); set CAIRN_TEST_REQUIRE_FUSE=1 to fail instead", err)
	}
	dir := mountTestDir(t)
	st := filepath.Join(dir, "store")
	img := filepath.Join(dir, "img")
	data := make([]byte, 3<<20+100)
	rand.NewChaCha8([32]byte{7}).Read(data)
	if err := os.WriteFile(img, data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init"},
		{"backup", "--type", "vm", "--id", "1", "--chunk-size", "64K", "--no-sync", "disk.img:" + img},
	} {
		if code, _, errOut := runCmd(t.Context(), append([]string{"--store", st}, args...)...); code != 0 {
			t.Fatalf("cairn %v: exit %d: %s", args, code, errOut)
		}
	}
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	full := filepath.Join(dir, "full") // a mountpoint that is not empty
	os.Mkdir(full, 0o755)
	if err := os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("umount", func(t *testing.T) {
		done, stdout := startMount(t, t.Context(), "--store", st, "mount", "--stats", mnt)
		got, err := os.ReadFile(filepath.Join(mnt, "vm/1/latest/disk.img"))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("read through the mount: %v, content equal %v", err, bytes.Equal(got, data))
		}
		if code, _, errOut := runCmd(t.Context(), "umount", mnt); code != 0 {
			t.Fatalf("cairn umount: exit %d: %s", code, errOut)
		}
		if code := <-done; code != 0 {
			t.Errorf("cairn mount exited %d after cairn umount", code)
		}
		var stats struct {
			ServedBytes int64 `json:"served_bytes"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &stats); err != nil || stats.ServedBytes < int64(len(data)) {
			t.Errorf("--stats printed %q (%v), want served_bytes >= %d", stdout, err, len(data))
		}
	})
	t.Run("signal", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done, _ := startMount(t, ctx, "--store", st, "mount", "--snapshot", "vm/1", mnt)
		if _, err := os.Stat(filepath.Join(mnt, "disk.img")); err != nil {
			t.Errorf("--snapshot mount: %v", err)
		}
		cancel() // what SIGINT and SIGTERM do
		if code := <-done; code != 0 {
			t.Errorf("cairn mount exited %d after the signal", code)
		}
		if mounted(mnt) {
			t.Errorf("%s still mounted", mnt)
		}
	})
	t.Run("errors", func(t *testing.T) {
		tests := []struct {
			args []string
			code int
			want string
		}{
			{[]string{"--store", st, "mount", filepath.Join(st, "vm")}, exitError, "inside the store"},
			{[]string{"--store", st, "mount", img}, exitError, "not a directory"},
			{[]string{"--store", st, "mount", "--group", "vm/1", "--snapshot", "vm/1", mnt}, exitUsage, "exclude"},
			{[]string{"--store", st, "mount", "--group", "vm/1/latest", mnt}, exitUsage, "TYPE/ID"},
			{[]string{"umount", mnt}, exitError, "not a mount point"},
			{[]string{"--store", st, "mount", full}, exitError, "not empty"},
			{[]string{"--store", st, "mount", "--cache-size", "256M", "--readahead", "33", mnt}, exitUsage, "at most 32"},
			{[]string{"--store", st, "mount", "--cache-size", "16M", "--readahead", "3", mnt}, exitUsage, "at most 2"},
			{[]string{"--store", st, "mount", "--readahead", "-1", mnt}, exitUsage, "negative"},
			{[]string{"--store", st, "cat", "--readahead", "9", "vm/1", "disk.img"}, exitUsage, "at most 8"},
			{[]string{"--store", st, "cat", "--readahead", "-2", "vm/1", "disk.img"}, exitUsage, "negative"},
		}
		for _, mode := range []string{"0644", "0600", "0", "0500", "1444", "04400", "0o400", "abc", "", "-400", "0777", "99999999999"} {
			tests = append(tests, struct {
				args []string
				code int
				want string
			}{[]string{"--store", st, "mount", "--image-mode", mode, mnt}, exitUsage, "--image-mode"})
		}
		for _, tt := range tests {
			code, _, errOut := runCmd(t.Context(), tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("cairn %q: exit %d, %q; want exit %d mentioning %q", tt.args, code, errOut, tt.code, tt.want)
			}
		}
		if mounted(full) || mounted(mnt) {
			t.Errorf("a refused mount is mounted")
		}
	})
	t.Run("modes", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			mode uint32
		}{{nil, 0o400}, {[]string{"--image-mode", "0440"}, 0o440}, {[]string{"--image-mode", "444"}, 0o444}} {
			ctx, cancel := context.WithCancel(t.Context())
			done, _ := startMount(t, ctx, append(append([]string{"--store", st, "mount"}, tt.args...), mnt)...)
			var fi unix.Stat_t
			if err := unix.Stat(filepath.Join(mnt, "vm/1/latest/disk.img"), &fi); err != nil {
				t.Error(err)
			} else if fi.Mode != unix.S_IFREG|tt.mode || fi.Uid != uint32(os.Geteuid()) || fi.Gid != uint32(os.Getegid()) {
				t.Errorf("mount %q: disk.img mode %o owner %d:%d, want %o owned by %d:%d", tt.args, fi.Mode, fi.Uid, fi.Gid,
					unix.S_IFREG|tt.mode, os.Geteuid(), os.Getegid())
			}
			cancel()
			<-done
		}
	})
	t.Run("small cache", func(t *testing.T) { // the default read-ahead shrinks to fit
		ctx, cancel := context.WithCancel(t.Context())
		done, _ := startMount(t, ctx, "--store", st, "mount", "--cache-size", "12M", mnt)
		got, err := os.ReadFile(filepath.Join(mnt, "vm/1/latest/disk.img"))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("read with a 12 MiB cache: %v, content equal %v", err, bytes.Equal(got, data))
		}
		if n := statsCacheSize(t, mnt); n != 12<<20 {
			t.Errorf(".stats cache_size %d with --cache-size 12M", n)
		}
		cancel()
		<-done
	})
	t.Run("default cache", func(t *testing.T) { // from the memory budget, shown in .stats
		ctx, cancel := context.WithCancel(t.Context())
		done, _ := startMount(t, ctx, "--store", st, "mount", mnt)
		if n, want := statsCacheSize(t, mnt), defaultMountCache(memoryBudget()); n != want {
			t.Errorf(".stats cache_size %d, want the default %d", n, want)
		}
		cancel()
		<-done
	})
	t.Run("nonempty", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done, _ := startMount(t, ctx, "--store", st, "mount", "--nonempty", full)
		if _, err := os.Stat(filepath.Join(full, "vm/1/latest/disk.img")); err != nil {
			t.Errorf("--nonempty mount: %v", err)
		}
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("cairn mount --nonempty exited %d", code)
		}
		if _, err := os.Stat(filepath.Join(full, "keep")); err != nil {
			t.Errorf("what the mount hid is gone: %v", err)
		}
	})
}

// mountTestDir is a temporary directory, on RAM when there is one: a
// store's 65,536 chunk directories are slow to make on a busy disk.
func mountTestDir(t *testing.T) string {
	t.Helper()
	base := ""
	if unix.Access("/dev/shm", unix.W_OK) == nil {
		base = "/dev/shm"
	}
	dir, err := os.MkdirTemp(base, "cairn-mount-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func runCmd(ctx context.Context, args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// startMount runs cairn mount in the background and returns once its log
// says it is mounted, with a channel for its exit code and its stdout.
func startMount(t *testing.T, ctx context.Context, args ...string) (<-chan int, *bytes.Buffer) {
	t.Helper()
	pr, pw := io.Pipe()
	stdout := &bytes.Buffer{}
	done := make(chan int, 1)
	go func() {
		code := run(ctx, args, strings.NewReader(""), stdout, pw)
		pw.Close()
		done <- code
	}()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			t.Log(sc.Text())
			if !seen && strings.Contains(sc.Text(), "msg=mounted") {
				seen = true
				ready <- true
			}
		}
		if !seen {
			ready <- false
		}
	}()
	if !<-ready {
		t.Fatalf("cairn %q did not mount (exit %d)", args, <-done)
	}
	return done, stdout
}

func mounted(dir string) bool {
	data, _ := os.ReadFile("/proc/self/mountinfo")
	return bytes.Contains(data, []byte(" "+dir+" "))
}

// statsCacheSize reads cache_size from the mount's .stats.
func statsCacheSize(t *testing.T, mnt string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, ".stats"))
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		CacheSize int64 `json:"cache_size"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf(".stats: %v", err)
	}
	return st.CacheSize
}

// TestDefaultMountCache: 1/32 of the memory budget, at least 256 MiB
// (also when the budget is unknown), at most 1 GiB; the budget is the
// RAM or less.
func TestDefaultMountCache(t *testing.T) {
	for _, tt := range []struct {
		mem  uint64
		want int64
	}{{0, 256 << 20}, {2 << 30, 256 << 20}, {8 << 30, 256 << 20}, {16 << 30, 512 << 20},
		{24 << 30, 768 << 20}, {32 << 30, 1 << 30}, {1 << 40, 1 << 30}} {
		if got := defaultMountCache(tt.mem); got != tt.want {
			t.Errorf("memory %d MiB: default cache %d MiB, want %d", tt.mem>>20, got>>20, tt.want>>20)
		}
	}
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		t.Fatal(err)
	}
	if m, ram := memoryBudget(), uint64(si.Totalram)*uint64(si.Unit); m == 0 || m > ram {
		t.Errorf("memory budget %d, RAM %d", m, ram)
	}
}
