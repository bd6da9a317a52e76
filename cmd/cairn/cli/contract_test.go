package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
)

// runArgs runs the command line in this process.
func runArgs(ctx context.Context, args ...string) (int, string) {
	var out, errb bytes.Buffer
	code := run(ctx, args, strings.NewReader(""), &out, &errb)
	return code, errb.String()
}

// TestContractEveryCommand: for every command of the tree, an unknown
// flag and (where the command bounds them) too many arguments are usage
// errors, exit 2.
func TestContractEveryCommand(t *testing.T) {
	a := &app{getenv: os.Getenv}
	root := a.rootCmd()
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Hidden || c.Name() == "help" {
			return
		}
		path := strings.Fields(c.CommandPath())[1:]
		n++
		if code, msg := runArgs(t.Context(), append(path, "--no-such-flag")...); code != exitUsage {
			t.Errorf("cairn %v --no-such-flag: exit %d, want 2: %s", path, code, msg)
		}
		if c.HasSubCommands() {
			if code, msg := runArgs(t.Context(), append(path, "no-such-command")...); code != exitUsage || !strings.Contains(msg, "unknown command") {
				t.Errorf("cairn %v no-such-command: exit %d, want 2: %s", path, code, msg)
			}
		}
	}
	walk(root)
	if n < 25 {
		t.Fatalf("walked %d commands only", n)
	}
}

func TestContractSignalExitCodes(t *testing.T) {
	for sig, want := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		ctx, cancel := context.WithCancelCause(t.Context())
		cancel(&signalError{sig: sig})
		code, msg := runArgs(ctx, "--store", t.TempDir()+"/none", "snapshots")
		if code != want || !strings.Contains(msg, "snapshots interrupted by "+signalName(sig)) {
			t.Errorf("%v: exit %d, want %d: %s", sig, code, want, msg)
		}
	}
	// Cancelled without a signal: the command's own code.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if code, _ := runArgs(ctx, "version"); code != exitOK {
		t.Errorf("version on a cancelled context: exit %d", code)
	}
}
