package cli

import (
	"testing"
)

// TestFindSize: find's --size values.
func TestFindSize(t *testing.T) {
	t.Parallel()
	if c, n, err := parseSizeTest("+1k"); c != 1 || n != 1024 || err != nil {
		t.Errorf("+1k: %d %d %v", c, n, err)
	}
	if c, n, err := parseSizeTest("-3"); c != -1 || n != 3 || err != nil {
		t.Errorf("-3: %d %d %v", c, n, err)
	}
	for _, bad := range []string{"", "+", "--1", "1q"} {
		if _, _, err := parseSizeTest(bad); err == nil {
			t.Errorf("--size %q accepted", bad)
		}
	}
}
