package verify

import (
	"strings"
	"testing"
)

// The advice after a cancelled verify names the flag as the command line
// spells it, and the job parameter as a control file does.
func TestNextStepsCancelled(t *testing.T) {
	var r Report
	steps := strings.Join(r.nextSteps(true), "\n")
	if !strings.Contains(steps, "--ignore-verified") || !strings.Contains(steps, "ignore-verified=true") {
		t.Fatalf("advice after a cancel: %q", steps)
	}
}
