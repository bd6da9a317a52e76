package e2e

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/cmd/cairn/cli"
)

// RunnerEnv chooses how Cairn runs a command: "binary" runs every
// command in the binary Build made; unset or anything else, the
// commands that do not need a process of their own run in-process
// (RunInProcess).
const RunnerEnv = "CAIRN_E2E_RUNNER"

// inProcessEnv are the variables cli.Run reads through its getenv: a
// test's env may set these for an in-process run. Any other variable
// (AWS_* keys, CAIRN_PROGRESS_INTERVAL, PATH) is read by library code
// from the process's environment, which a test must not change, so a
// command given one runs in the binary.
var inProcessEnv = map[string]bool{
	"CAIRN_STORE":                 true,
	"CAIRN_KEYFILE":               true,
	"CAIRN_KEY_PASSWORD_FILE":     true,
	"CAIRN_KEY_NEW_PASSWORD_FILE": true,
	"CAIRN_MASTER_PASSWORD_FILE":  true,
}

// ownProcess are the commands that need a process of their own: a mount
// serves FUSE until it is unmounted (or forks a daemon), and umount
// goes with it.
var ownProcess = map[string]bool{"mount": true, "umount": true}

// inProcess says whether the command line args with env added may run
// in-process.
func inProcess(env, args []string) bool {
	if os.Getenv(RunnerEnv) == "binary" {
		return false
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if !inProcessEnv[k] || k == "CAIRN_STORE" && onObjectStorage(v) {
			return false
		}
	}
	for _, a := range args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") {
			a = v
		}
		if a == "--s3" || onObjectStorage(a) || processFile(a) {
			return false
		}
	}
	return !ownProcess[command(args)]
}

// processFile says whether arg names a file of the process
// (/dev/stdin, /dev/fd/N, /proc/self/…): the test process's, in-process.
func processFile(arg string) bool {
	for _, p := range []string{"/dev/stdin", "/dev/stdout", "/dev/stderr", "/dev/fd/", "/proc/self/"} {
		if strings.HasPrefix(arg, p) || strings.Contains(arg, ":"+p) {
			return true
		}
	}
	return false
}

// onObjectStorage says whether arg names a store on object storage (a
// directory with remote.json). Commands on one run in the binary: its
// stderr is the process's own, so a line of the S3 client's that did not
// go through the command's log handler would show there (TestQuiet…).
func onObjectStorage(arg string) bool {
	_, err := os.Stat(filepath.Join(arg, "remote.json"))
	return arg != "" && err == nil
}

// command is the first word of args that is not a global flag or its
// value: the command's name.
func command(args []string) string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--store" || a == "--log-format":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a
		}
	}
	return ""
}

// RunInProcess runs the command line args in this process with
// cli.Run, as the binary would with env added to its environment: its
// own standard streams (stdin, or an empty input, as the binary's
// /dev/null), the exit code it returns. Code it runs is race-checked as
// the test binary is, and nothing of it is shared with another
// in-process run but the process (no environment, no working
// directory change, no default logger).
func RunInProcess(ctx context.Context, env []string, stdin []byte, args ...string) Result {
	vars := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	getenv := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return os.Getenv(k)
	}
	var in io.Reader = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	code := cli.Run(ctx, args, getenv, in, &out, &errb)
	return Result{Code: code, Stdout: out.String(), Stderr: errb.String()}
}
