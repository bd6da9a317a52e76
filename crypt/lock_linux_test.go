//go:build linux

package crypt

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags returns the VmFlags line of the mapping that holds addr, from
// /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = addr >= lo && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return line
		}
	}
	t.Fatalf("no mapping holds %#x", addr)
	return ""
}

// TestKeyMemoryLocked: the key bytes live in a mapping the kernel keeps
// out of core dumps ("dd"), locked against swap ("lo") unless
// RLIMIT_MEMLOCK refused it.
func TestKeyMemoryLocked(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Wipe()
	if !k.mapped {
		t.Fatal("key memory was not mapped")
	}
	flags := strings.Fields(vmFlags(t, uintptr(unsafe.Pointer(&k.enc[0]))))
	has := func(f string) bool {
		for _, x := range flags {
			if x == f {
				return true
			}
		}
		return false
	}
	if !has("dd") {
		t.Errorf("key memory is not excluded from core dumps: %v", flags)
	}
	if !has("lo") {
		t.Logf("key memory not locked (RLIMIT_MEMLOCK?): %v", flags)
	}
}
