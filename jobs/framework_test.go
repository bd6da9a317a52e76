package jobs

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
)

// waitKind is a kind whose job logs, then runs until it is cancelled; it
// takes one parameter, n=1..9.
type waitKind struct{ name string }

func (k waitKind) Name() string { return k.name }

func (k waitKind) New(_ *store.Store, params map[string]string) (Work, error) {
	p := NewParams(k.name, params)
	n := p.Int("n", 1, 1, 9)
	return waitWork{n: n}, p.Done()
}

type waitWork struct{ n int }

func (w waitWork) Run(ctx context.Context, j *Job) error {
	j.SetTotals(int64(w.n), 0)
	j.Logf("waiting")
	<-ctx.Done()
	return ctx.Err()
}

func managerStore(t *testing.T) *store.Store {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestManagerFramework drives the manager with a kind of its own: names,
// one job per kind here and across processes, refused commands kept in
// Status, cancel, close.
func TestManagerFramework(t *testing.T) {
	s := managerStore(t)
	m := NewManager(context.Background(), s, nil)
	for _, k := range []Kind{waitKind{"Wait"}, waitKind{""}, waitKind{"a b"}, waitKind{"-x"}} {
		if err := m.Register(k); err == nil {
			t.Errorf("kind %q registered", k.Name())
		}
	}
	if err := m.Register(waitKind{"wait"}); err != nil {
		t.Fatal(err)
	}
	if err := m.Register(waitKind{"wait"}); err == nil {
		t.Error("kind registered twice")
	}
	if _, err := m.Start("gc", nil); !errors.Is(err, ErrUnknownKind) {
		t.Errorf("unknown kind: %v", err)
	}
	if st, err := m.Status("wait"); err != nil || st.State != StateIdle {
		t.Errorf("before any job: %+v %v", st, err)
	}
	if err := m.Cancel("wait"); !errors.Is(err, ErrNotRunning) {
		t.Errorf("cancel with nothing running: %v", err)
	}
	if _, err := m.Control("wait", "start n=10"); !errors.Is(err, ErrBadParam) {
		t.Errorf("bad parameter: %v", err)
	}
	if st, _ := m.Status("wait"); !strings.Contains(st.LastCommandError, "n=") {
		t.Errorf("refused command not in status: %+v", st)
	}
	j, err := m.Control("wait", "start n=3")
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Status("wait"); st.LastCommandError != "" || st.ID != j.ID() {
		t.Errorf("accepted command: %+v", st)
	}
	if _, err := ParseUPID(j.ID()); err != nil {
		t.Errorf("job id: %v", err)
	}
	if _, err := m.Start("wait", nil); !errors.Is(err, ErrRunning) {
		t.Errorf("second start: %v", err)
	}
	other := NewManager(context.Background(), s, nil)
	defer other.Close()
	other.Register(waitKind{"wait"})
	if _, err := other.Start("wait", nil); !errors.Is(err, ErrRunning) || !strings.Contains(err.Error(), "another process") {
		t.Errorf("start from another manager: %v", err)
	}
	if _, err := m.Control("wait", "cancel"); err != nil {
		t.Fatal(err)
	}
	st, err := m.Wait(t.Context(), j)
	if err != nil || st.State != StateCancelled || st.Progress.ItemsTotal != 3 || len(j.Log()) == 0 {
		t.Fatalf("after cancel: %+v %v", st, err)
	}
	if list := m.List(); len(list) != 1 || list[0].State != StateCancelled {
		t.Errorf("list: %+v", list)
	}
	j2, err := other.Start("wait", nil) // the store's lock is free again
	if err != nil {
		t.Fatalf("start after the first ended: %v", err)
	}
	other.Close() // cancels j2 and waits for it
	if st := j2.Status(); st.State != StateCancelled {
		t.Errorf("job after Close: %+v", st)
	}
	if _, err := other.Start("wait", nil); !errors.Is(err, ErrClosed) {
		t.Errorf("start after Close: %v", err)
	}
	m.Close()
}
