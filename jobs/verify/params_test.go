package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
)

func TestParseVerifyParams(t *testing.T) {
	def := Options{ChunkOrder: jobs.OrderAuto, ReadThreads: 2, VerifyThreads: 4, OutdatedAfter: -1}
	with := func(f func(*Options)) Options { o := def; f(&o); return o }
	tests := []struct {
		params  string
		want    Options
		errWord string
	}{
		{"", def, ""},
		{"chunk-order=inode read-threads=2 verify-threads=32", with(func(o *Options) {
			o.ChunkOrder, o.ReadThreads, o.VerifyThreads = jobs.OrderInode, 2, 32
		}), ""},
		{"chunk-order=index", with(func(o *Options) { o.ChunkOrder = jobs.OrderIndex }), ""},
		{"ignore-verified outdated-after=0", with(func(o *Options) { o.IgnoreVerified, o.OutdatedAfter = true, 0 }), ""},
		{"ignore-verified=no", def, ""},
		{"ns=prod/db", with(func(o *Options) { o.NS = "prod/db" }), ""},
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
		m, err := jobs.ParseParams(strings.Fields(tc.params))
		if err != nil {
			t.Fatalf("%q: %v", tc.params, err)
		}
		got, err := ParseParams(m)
		if tc.errWord != "" {
			if !errors.Is(err, jobs.ErrBadParam) || !strings.Contains(err.Error(), tc.errWord) {
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
	o, err := ParseParams(map[string]string{"ns": "prod", "snapshots": "vm/100/latest,ns/other/ct/7/2024-01-02T03:04:05Z"})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Refs) != 2 || o.Refs[0].NS != "prod" || !o.Refs[0].Latest ||
		o.Refs[1].NS != "other" || o.Refs[1].ID != "7" {
		t.Fatalf("snapshots = %+v", o.Refs)
	}
	back, err := ParseParams(o.Params())
	if err != nil {
		t.Fatal(err)
	}
	if back.Refs[0].String() != "ns/prod/vm/100/latest" || back.Refs[1].String() != "ns/other/ct/7/2024-01-02T03:04:05Z" {
		t.Fatalf("round trip: %v", back.Params())
	}
}
