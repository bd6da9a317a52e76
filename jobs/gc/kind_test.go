package gc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store/storetest"
)

// The gc kind runs from a control line, with status, log and report
// like the other kinds, and refuses bad parameters by name.
func TestKindControl(t *testing.T) {
	s := storetest.NewStore(t)
	a := backup(t, s, vm, 0, storetest.RandBytes("a", 3*testChunk))
	s.ForgetSnapshot(context.Background(), a)
	m := jobs.NewManager(context.Background(), s, nil)
	defer m.Close()
	if err := m.Register(Kind{}); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"start atime-cutoff=-1s", "start atime-cutoff=banana", "start atime-cutoff=1000000h",
		"start colour=blue", "start mark-workers=0", "start sweep-workers=65"} {
		if _, err := m.Control(KindName, line); !errors.Is(err, jobs.ErrBadParam) {
			t.Errorf("%q: %v, want a bad parameter", line, err)
		}
	}
	if st, _ := m.Status(KindName); !strings.Contains(st.LastCommandError, "sweep-workers") {
		t.Errorf("last command error %q", st.LastCommandError)
	}
	j, err := m.Control(KindName, "start atime-cutoff=0 sweep-workers=3")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := m.Wait(ctx, j)
	if err != nil || st.State != jobs.StateOK {
		t.Fatalf("job: %v %+v", err, st)
	}
	rep, ok := st.Result.(Report)
	if !ok || rep.RemovedChunks == 0 || rep.UPID != j.ID() || rep.AtimeCutoffSeconds != 0 {
		t.Errorf("result %+v", st.Result)
	}
	log := strings.Join(j.Log(), "\n")
	for _, want := range []string{"access time check passed", "phase 1 done", "phase 2 done"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if saved, _, _ := ReadStatus(s); saved.UPID != j.ID() {
		t.Errorf("saved status of %q", saved.UPID)
	}
}

func TestParseParamsRoundTrip(t *testing.T) {
	opt, err := ParseParams(map[string]string{})
	if err != nil || opt.AtimeCutoff != DefaultAtimeCutoff {
		t.Fatalf("defaults: %+v %v", opt, err)
	}
	in := Options{AtimeCutoff: 90 * time.Minute, MarkWorkers: 3, SweepWorkers: 5}
	out, err := ParseParams(in.Params())
	if err != nil || out.AtimeCutoff != in.AtimeCutoff || out.MarkWorkers != 3 || out.SweepWorkers != 5 {
		t.Errorf("round trip: %+v %v", out, err)
	}
}
