package daemon

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFailure: the child's last "cairn: " line is the error, its other
// output is passed on, and its exit code kept.
func TestFailure(t *testing.T) {
	waitErr := exec.Command("sh", "-c", "exit 3").Run()
	var out bytes.Buffer
	err := failure(waitErr, "log line\ncairn: mount: no such snapshot\n", &out)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || err.Error() != "mount: no such snapshot" || out.String() != "log line\n" {
		t.Errorf("%#v %q, passed on %q", err, err, out.String())
	}
	out.Reset()
	err = failure(errors.New("signal: killed"), "", &out)
	if !errors.As(err, &ee) || ee.Code != 1 || err.Error() != "the background mount ended before it was ready (signal: killed)" {
		t.Errorf("%#v %q", err, err)
	}
}

// TestOpenLog: the log is made 0600 and appended to; none is /dev/null.
func TestOpenLog(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	for range 2 {
		f, err := openLog(name)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("x")
		f.Close()
	}
	if fi, err := os.Stat(name); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 2 {
		t.Errorf("log %v, %v", fi, err)
	}
	if f, err := openLog(""); err != nil || f.Name() != os.DevNull {
		t.Errorf("no log file: %v", err)
	} else {
		f.Close()
	}
	if LogName("") != "discarded (give --log-file)" || LogName(name) != name {
		t.Error("LogName")
	}
}
