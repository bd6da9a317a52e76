package e2e

import (
	"bytes"
	"os"
	"testing"
)

// TestWrappersAlike: every end-to-end package has the same
// helpers_test.go, so that a test file moves between them unchanged.
func TestWrappersAlike(t *testing.T) {
	want, err := os.ReadFile("../helpers_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"../mount/helpers_test.go", "../remote/helpers_test.go"} {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from test/helpers_test.go: the end-to-end packages must wrap test/e2e alike", p)
		}
	}
}
