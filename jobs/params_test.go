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

func TestParseVerifyParams(t *testing.T) {
	def := VerifyOptions{ChunkOrder: OrderAuto, ReadThreads: 1, VerifyThreads: 4, OutdatedAfter: -1}
	with := func(f func(*VerifyOptions)) VerifyOptions { o := def; f(&o); return o }
	tests := []struct {
		params  string
		want    VerifyOptions
		errWord string
	}{
		{"", def, ""},
		{"chunk-order=inode read-threads=2 verify-threads=32", with(func(o *VerifyOptions) {
			o.ChunkOrder, o.ReadThreads, o.VerifyThreads = OrderInode, 2, 32
		}), ""},
		{"chunk-order=index", with(func(o *VerifyOptions) { o.ChunkOrder = OrderIndex }), ""},
		{"ignore-verified outdated-after=0", with(func(o *VerifyOptions) { o.IgnoreVerified, o.OutdatedAfter = true, 0 }), ""},
		{"ignore-verified=no", def, ""},
		{"ns=prod/db", with(func(o *VerifyOptions) { o.NS = "prod/db" }), ""},
		{"chunk-order=random", def, "chunk-order"},
		{"read-threads=0", def, "read-threads"},
		{"read-threads=33", def, "read-threads"},
		{"verify-threads=x", def, "verify-threads"},
		{"ignore-verified=maybe", def, "ignore-verified"},
		{"outdated-after=-1 ignore-verified", def, "outdated-after"},
		{"outdated-after=3", def, "needs ignore-verified"},
		{"threads=2", def, `"threads"`},
		{"ns=bad..ns/x!", def, "ns"},
		{"snapshots=vm", def, "snapshots"},
		{"snapshots=vm/1/yesterday", def, "yesterday"},
	}
	for _, tc := range tests {
		m, err := ParseParams(strings.Fields(tc.params))
		if err != nil {
			t.Fatalf("%q: %v", tc.params, err)
		}
		got, err := ParseVerifyParams(m)
		if tc.errWord != "" {
			if !errors.Is(err, ErrBadParam) || !strings.Contains(err.Error(), tc.errWord) {
				t.Errorf("%q: err = %v, want ErrBadParam naming %s", tc.params, err, tc.errWord)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.params, err)
			continue
		}
		if got.NS != tc.want.NS || got.ChunkOrder != tc.want.ChunkOrder || got.ReadThreads != tc.want.ReadThreads ||
			got.VerifyThreads != tc.want.VerifyThreads || got.IgnoreVerified != tc.want.IgnoreVerified ||
			got.OutdatedAfter != tc.want.OutdatedAfter || len(got.Refs) != 0 {
			t.Errorf("%q: got %+v, want %+v", tc.params, got, tc.want)
		}
	}
}

func TestVerifyParamsSnapshotsRoundTrip(t *testing.T) {
	o, err := ParseVerifyParams(map[string]string{"ns": "prod", "snapshots": "vm/100/latest,ns/other/ct/7/2024-01-02T03:04:05Z"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Refs) != 2 || o.Refs[0].NS != "prod" || !o.Refs[0].Latest ||
		o.Refs[1].NS != "other" || o.Refs[1].ID != "7" {
		t.Fatalf("snapshots = %+v", o.Refs)
	}
	back, err := ParseVerifyParams(o.Params())
	if err != nil {
		t.Fatal(err)
	}
	if back.Refs[0].String() != "ns/prod/vm/100/latest" || back.Refs[1].String() != "ns/other/ct/7/2024-01-02T03:04:05Z" {
		t.Fatalf("round trip: %v", back.Params())
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
