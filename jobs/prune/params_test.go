package prune

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store"
)

func TestParseJobParams(t *testing.T) {
	good := []struct {
		line string
		want JobOptions
	}{
		{"start group=vm/100 keep-daily=7 dry-run=1",
			JobOptions{Group: store.Group{Type: "vm", ID: "100"}, Options: Options{Daily: 7}, DryRun: true}},
		{"start group=ns/a/ns/b/ct/web keep-last=0 keep-yearly=1000000",
			JobOptions{Group: store.Group{NS: "a/b", Type: "ct", ID: "web"}, Options: Options{Yearly: MaxKeep}}},
		{"start ns=a group=host/x keep-hourly=1 keep-weekly=2 keep-monthly=3",
			JobOptions{NS: "a", Group: store.Group{NS: "a", Type: "host", ID: "x"}, Options: Options{Hourly: 1, Weekly: 2, Monthly: 3}}},
		{"start all ns=/a/b/ keep-last=3",
			JobOptions{All: true, NS: "a/b", Options: Options{Last: 3}}},
		{"start all=yes", JobOptions{All: true}},
	}
	for _, g := range good {
		cmd, err := jobs.ParseControl(g.line)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseParams(cmd.Params)
		if err != nil || o != g.want {
			t.Errorf("%q: got %+v, %v; want %+v", g.line, o, err, g.want)
			continue
		}
		back, err := ParseParams(o.Params())
		if err != nil || back.Options != o.Options || back.All != o.All || back.Group != o.Group || back.DryRun != o.DryRun {
			t.Errorf("%q: Params %v reads back as %+v, %v", g.line, o.Params(), back, err)
		}
	}
	bad := []struct{ line, want string }{
		{"start keep-daily=7", "group="},
		{"start group=vm/100 all=1", "not both"},
		{"start group=vm/100 keep-daily=-1", `keep-daily="-1"`},
		{"start group=vm/100 keep-last=1000001", `keep-last="1000001"`},
		{"start group=vm/100 keep-weekly=99999999999999999999999", "keep-weekly"},
		{"start group=vm/100 keep-monthly=x", "keep-monthly"},
		{"start group=vm/100 dry-run=maybe", "dry-run"},
		{"start group=vm/100/2024-01-01T00:00:00Z", "names a snapshot"},
		{"start group=vm/100/latest", "names a snapshot"},
		{"start group=vm/../../etc", "group="},
		{"start group=disk/100", "group="},
		{"start all ns=../x", "ns="},
		{"start group=vm/100 keep-everything=1", `no parameter "keep-everything"`},
		{"start group=vm/100 snapshots=vm/100", `no parameter "snapshots"`},
	}
	for _, b := range bad {
		cmd, err := jobs.ParseControl(b.line)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseParams(maps.Clone(cmd.Params))
		if !errors.Is(err, jobs.ErrBadParam) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: got %v, want ErrBadParam naming %s", b.line, err, b.want)
		}
	}
}
