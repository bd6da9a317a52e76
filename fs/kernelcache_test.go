package fs

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// dropCount is how many times any process on this machine has dropped
// the kernel's caches (/proc/vmstat: drop_pagecache and drop_slab). This
// package's memory tests drop them, and so do test processes of other
// packages and other checkouts running at the same time.
func dropCount(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/vmstat")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, v, _ := strings.Cut(sc.Text(), " ")
		if name == "drop_pagecache" || name == "drop_slab" {
			c, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("/proc/vmstat: %s %q: %v", name, v, err)
			}
			n += c
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// kernelCached runs try, which repeats what the kernel should answer
// from its cache since the last run (or the caller's read just before)
// and returns the requests that reached the mount, until a run sends
// none. A run during which anyone dropped caches proves nothing, nor the
// run after it (a drop is counted when it ends); two runs in a row with
// no drop that both sent requests are a failure: their count is
// returned. 0 when a run sent none, or when caches were dropped during
// every one of 20 runs (logged: nothing could be checked).
func kernelCached(t *testing.T, try func() int64) int64 {
	t.Helper()
	prev, missed := dropCount(t), false
	for range 20 {
		n := try()
		now := dropCount(t)
		undisturbed := now == prev
		prev = now
		if n == 0 {
			return 0
		}
		if undisturbed && missed {
			return n
		}
		missed = undisturbed
	}
	t.Logf("caches were dropped during each of 20 tries: the kernel's cache was not checked")
	return 0
}
