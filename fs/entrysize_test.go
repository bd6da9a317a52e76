package fs

import (
	"testing"
	"unsafe"
)

// TestRawSlotSize keeps a looked-up entry's slot at 72 bytes: with the
// index (about 8 bytes) it is the mount's memory per entry, so a field
// added there costs every entry.
func TestRawSlotSize(t *testing.T) {
	if n := unsafe.Sizeof(rawSlot{}); n > 72 {
		t.Errorf("rawSlot is %d bytes, want at most 72", n)
	}
}
