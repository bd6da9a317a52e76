package jobs

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

// FuzzParseControl parses arbitrary control-file lines: no panic, only
// ErrBadCommand or ErrBadParam, keys as documented, start parameters
// print back to a line that parses to the same, and typed reads of the
// parameters fail with ErrBadParam, never a panic.
func FuzzParseControl(f *testing.F) {
	for _, s := range []string{"start", "cancel", "start chunk-order=inode read-threads=2", "start ignore-verified",
		"start ns=a/b snapshots=vm/1/latest,ct/2", "start a=1 a=2", "start =3", "stop", "start read-threads=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		cmd, err := ParseControl(line)
		if err != nil {
			if !errors.Is(err, ErrBadCommand) && !errors.Is(err, ErrBadParam) {
				t.Fatalf("%q: error %v", line, err)
			}
			return
		}
		if cmd.Op == OpCancel {
			if cmd.Params != nil {
				t.Fatalf("%q: cancel with parameters", line)
			}
			return
		}
		for k, v := range cmd.Params {
			if !keyRE.MatchString(k) || strings.ContainsAny(v, " \t\n") {
				t.Fatalf("%q: parameter %q=%q", line, k, v)
			}
		}
		if len(cmd.Params) > 0 {
			again, err := ParseControl("start " + formatParams(cmd.Params))
			if err != nil || !maps.Equal(again.Params, cmd.Params) {
				t.Fatalf("%q printed as %q parses to %v, %v", line, formatParams(cmd.Params), again.Params, err)
			}
		}
		p := NewParams("fuzz", cmd.Params)
		p.Int("read-threads", 4, 1, 64)
		p.Bool("ignore-verified", false)
		p.Enum("chunk-order", "inode", "inode", "none")
		p.String("ns", "")
		if err := p.Done(); err != nil && !errors.Is(err, ErrBadParam) {
			t.Fatalf("%q: Done: %v", line, err)
		}
	})
}
