package fs

import (
	"testing"
	"unsafe"
)

// TestTreeNodeSize keeps a looked-up entry's own node in the 192-byte
// size class: the mount's part of the memory per entry (go-fuse's Inode
// is 128 of it), so a field added there costs every entry 16 bytes.
func TestTreeNodeSize(t *testing.T) {
	if n := unsafe.Sizeof(treeNode{}); n > 192 {
		t.Errorf("treeNode is %d bytes, want at most 192", n)
	}
}
