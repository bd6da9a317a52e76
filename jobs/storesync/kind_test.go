package storesync

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestParseParams reads good and hostile parameters.
func TestParseParams(t *testing.T) {
	good := []string{
		"from=/s", "from=/s group=vm/1 remove-vanished=1", "from=/s snapshot=vm/1/latest",
		"from=/s snapshot=ns/a/vm/1/2024-01-01T00:00:00Z", "from=/s ns=a/b workers=8",
	}
	for _, line := range good {
		p, err := jobs.ParseParams(strings.Fields(line))
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseParams(p)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		back, err := ParseParams(o.Params())
		if err != nil || back.From != o.From || back.NS != o.NS || back.RemoveVanished != o.RemoveVanished {
			t.Fatalf("%q reads back as %+v, %v", line, back, err)
		}
	}
	bad := []string{
		"", "from=relative", "from=/a/../b", "from=/s group=vm/1/latest", "from=/s group=vm/1 snapshot=vm/1/latest",
		"from=/s snapshot=vm/1 remove-vanished", "from=/s ns=../x", "from=/s workers=0", "from=/s workers=65",
		"from=/s group=zz/1", "from=/s bogus=1", "from=/s remove-vanished=maybe",
	}
	for _, line := range bad {
		p, err := jobs.ParseParams(strings.Fields(line))
		if err != nil {
			continue
		}
		if _, err := ParseParams(p); !errors.Is(err, jobs.ErrBadParam) {
			t.Errorf("%q: want ErrBadParam, got %v", line, err)
		}
	}
}

// TestSyncJob runs the job through a manager's control line, as a
// mount's .jobs/sync/control does.
func TestSyncJob(t *testing.T) {
	a, b := storetest.NewStore(t), storetest.NewStore(t)
	snaps := backups(t, a, vm1, 2)
	m := jobs.NewManager(context.Background(), b, nil)
	if err := m.Register(Kind{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	j, err := m.Control(KindName, "start from="+a.Root()+" group=vm/100")
	if err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(t.Context(), j)
	if err != nil || st.State != jobs.StateOK {
		t.Fatalf("%+v %v", st, err)
	}
	rep := st.Result.(Report)
	if rep.SnapshotsCopied != 2 || st.Progress.ItemsDone != 2 || st.Progress.ItemsTotal != 2 {
		t.Fatalf("%+v", st)
	}
	sameSnapshot(t, a, b, snaps[1])
	// a source that is no store fails the job, naming it
	j, err = m.Control(KindName, "start from="+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, _ = m.Wait(t.Context(), j)
	if st.State != jobs.StateFailed || !strings.Contains(strings.Join(st.Errors, " "), "source") {
		t.Fatalf("%+v", st)
	}
	if _, err := m.Control(KindName, "start from=rel"); !errors.Is(err, jobs.ErrBadParam) {
		t.Fatalf("relative from: %v", err)
	}
}
