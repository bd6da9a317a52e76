package test

import (
	"os"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestMain builds the binary that the tests run where a command needs a
// process of its own; the fixtures are test/e2e's.
func TestMain(m *testing.M) {
	e2e.Build()
	os.Exit(e2e.Main(m))
}
