package jobs

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

func TestParseControl(t *testing.T) {
	tests := []struct {
		line    string
		op      Op
		params  map[string]string
		errWord string // the error must name this
	}{
		{"start", OpStart, map[string]string{}, ""},
		{"  start   chunk-order=inode read-threads=2\n", OpStart, map[string]string{"chunk-order": "inode", "read-threads": "2"}, ""},
		{"start ignore-verified", OpStart, map[string]string{"ignore-verified": "true"}, ""},
		{"start ns=a/b snapshots=vm/1/latest,ct/2", OpStart, map[string]string{"ns": "a/b", "snapshots": "vm/1/latest,ct/2"}, ""},
		{"cancel", OpCancel, nil, ""},
		{"cancel\n", OpCancel, nil, ""},
		{"", "", nil, "empty"},
		{"stop", "", nil, `"stop"`},
		{"Start", "", nil, `"Start"`},
		{"cancel now", "", nil, `"now"`},
		{"start =3", "", nil, `"=3"`},
		{"start Read-Threads=2", "", nil, `"Read-Threads=2"`},
		{"start a=1 a=2", "", nil, `"a" given twice`},
	}
	for _, tc := range tests {
		cmd, err := ParseControl(tc.line)
		if tc.errWord != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errWord) {
				t.Errorf("%q: err = %v, want one naming %s", tc.line, err, tc.errWord)
			}
			if err != nil && !errors.Is(err, ErrBadCommand) && !errors.Is(err, ErrBadParam) {
				t.Errorf("%q: err %v is neither ErrBadCommand nor ErrBadParam", tc.line, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if cmd.Op != tc.op || !maps.Equal(cmd.Params, tc.params) {
			t.Errorf("%q: got %v %v, want %v %v", tc.line, cmd.Op, cmd.Params, tc.op, tc.params)
		}
	}
}

func TestUPID(t *testing.T) {
	u := newUPID("verify", "my:store")
	s := u.String()
	if !strings.HasPrefix(s, "UPID:") || !strings.HasSuffix(s, ":") || !strings.Contains(s, `my\x3astore`) {
		t.Fatalf("UPID %q", s)
	}
	back, err := ParseUPID(s)
	if err != nil {
		t.Fatal(err)
	}
	if back.Start.Unix() != u.Start.Unix() || back.WorkerID != "my:store" || back.Type != "verify" || back.PID != u.PID || back.TaskID != u.TaskID {
		t.Fatalf("parsed %+v from %q, want %+v", back, s, u)
	}
	// A PBS task id.
	pbs := "UPID:pbs:000004D2:0001E240:00000003:65A0B2C0:verify:store1\\x3avm-100:root@pam:"
	p, err := ParseUPID(pbs)
	if err != nil || p.Start != time.Unix(0x65A0B2C0, 0) || p.WorkerID != "store1:vm-100" || p.PID != 1234 {
		t.Fatalf("ParseUPID(%q) = %+v, %v", pbs, p, err)
	}
	for _, bad := range []string{"", "UPID:x", "UPID:n:zz:0:0:0:verify:x:u:", "XPID:n:1:0:0:0:verify:x:u:"} {
		if _, err := ParseUPID(bad); err == nil {
			t.Errorf("ParseUPID(%q) accepted", bad)
		}
	}
}
