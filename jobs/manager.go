package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cairnfs/cairn/store"
)

// Sentinel errors of the manager, matched with errors.Is.
var (
	ErrUnknownKind = errors.New("unknown job kind")
	ErrRunning     = errors.New("a job of this kind is already running")
	ErrNotRunning  = errors.New("no job of this kind is running")
	ErrClosed      = errors.New("job manager closed")
)

// Kind is a kind of job (verify, tape-export, gc, prune).
type Kind interface {
	// Name is the kind's name, also its .jobs/<name> directory.
	Name() string
	// New checks params and returns the work of one job on s. Errors
	// wrap ErrBadParam and name the parameter.
	New(s *store.Store, params map[string]string) (Work, error)
}

// Work is what one job does. Run reports progress, log lines and errors
// through j and returns when done or soon (well within a second) after
// ctx ends, leaving nothing half-written.
type Work interface {
	Run(ctx context.Context, j *Job) error
}

// Manager runs the jobs of one store: at most one job of each kind at a
// time, in this process and (through a lock file in the store) across
// processes. It is safe for concurrent use; none of its methods waits on
// a job's I/O.
type Manager struct {
	s      *store.Store
	base   context.Context
	logger *slog.Logger

	mu      sync.Mutex
	kinds   map[string]Kind
	current map[string]*Job   // running, or the last one
	badCmd  map[string]string // why the last command of a kind was refused
	wg      sync.WaitGroup
	closed  bool
}

// NewManager returns a manager of jobs on s. Jobs stop when ctx ends.
func NewManager(ctx context.Context, s *store.Store, logger *slog.Logger) *Manager {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{s: s, base: ctx, logger: logger, kinds: map[string]Kind{},
		current: map[string]*Job{}, badCmd: map[string]string{}}
}

// Register adds a kind of job.
func (m *Manager) Register(k Kind) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !keyRE.MatchString(k.Name()) {
		return fmt.Errorf("job kind %q: want a lower-case name", k.Name())
	}
	if _, dup := m.kinds[k.Name()]; dup {
		return fmt.Errorf("job kind %q registered twice", k.Name())
	}
	m.kinds[k.Name()] = k
	return nil
}

// Kinds returns the registered kinds, sorted.
func (m *Manager) Kinds() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.kinds))
	for k := range m.kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Start starts a job of kind with params in the background. It is refused
// with ErrRunning while a job of that kind runs here, and while one runs
// in another process on the same store once the store's lock wait
// (store.SetLockWait, --lock-wait) has passed; that error wraps the
// store's *LockedError, which names the holder (command, PID, start).
func (m *Manager) Start(kind string, params map[string]string) (*Job, error) {
	w, err := m.prepare(kind, params)
	if err != nil {
		return nil, err
	}
	// The wait for another process's job is made without m.mu held.
	lock, err := m.s.LockJobContext(m.base, kind)
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			return nil, fmt.Errorf("%s: %w in another process on this store: %w", kind, ErrRunning, err)
		}
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.startable(kind, true); err != nil {
		lock.Unlock()
		return nil, err
	}
	if params == nil {
		params = map[string]string{}
	}
	upid := newUPID(kind, filepath.Base(m.s.Root()))
	ctx, cancel := context.WithCancel(m.base)
	j := newJob(upid.String(), kind, params, w, m.logger)
	j.cancel = cancel
	m.current[kind] = j
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		j.run(ctx, func() {
			lock.Unlock()
			cancel()
		})
	}()
	return j, nil
}

// prepare checks that a job of kind may start and makes its work.
func (m *Manager) prepare(kind string, params map[string]string) (Work, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.startable(kind, false); err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]string{}
	}
	w, err := m.kinds[kind].New(m.s, params) // bad parameters first
	if err != nil {
		return nil, err
	}
	return w, m.startable(kind, true)
}

// startable says why a job of kind may not start now (running: also
// because one runs in this process); m.mu is held.
func (m *Manager) startable(kind string, running bool) error {
	if m.closed {
		return ErrClosed
	}
	if _, ok := m.kinds[kind]; !ok {
		return fmt.Errorf("%w %q (have %v)", ErrUnknownKind, kind, slices.Sorted(maps.Keys(m.kinds)))
	}
	if cur := m.current[kind]; running && cur != nil && !cur.State().Done() {
		return fmt.Errorf("%s: %w (%s); cancel it first", kind, ErrRunning, cur.ID())
	}
	return nil
}

// Cancel asks the running job of kind to stop; it returns at once.
func (m *Manager) Cancel(kind string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.kinds[kind]; !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	cur := m.current[kind]
	if cur == nil || cur.State().Done() {
		return fmt.Errorf("%s: %w", kind, ErrNotRunning)
	}
	cur.Logf("cancel requested")
	cur.cancel()
	return nil
}

// Control runs one line written to .jobs/<kind>/control: "start
// [key=value …]" or "cancel". A refused line's reason is kept and shown
// in Status(kind) until a later line is accepted.
func (m *Manager) Control(kind, line string) (*Job, error) {
	j, err := m.control(kind, line)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.kinds[kind]; ok {
		if err != nil {
			m.badCmd[kind] = fmt.Sprintf("%q: %v", line, err)
		} else {
			delete(m.badCmd, kind)
		}
	}
	return j, err
}

func (m *Manager) control(kind, line string) (*Job, error) {
	cmd, err := ParseControl(line)
	if err != nil {
		return nil, err
	}
	if cmd.Op == OpCancel {
		if err := m.Cancel(kind); err != nil {
			return nil, err
		}
		j, _ := m.Job(kind)
		return j, nil
	}
	return m.Start(kind, cmd.Params)
}

// Job returns the running or last job of kind.
func (m *Manager) Job(kind string) (*Job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j := m.current[kind]
	return j, j != nil
}

// Status returns the status of the running or last job of kind, with the
// reason the last command was refused; a kind that never ran is idle.
func (m *Manager) Status(kind string) (Status, error) {
	m.mu.Lock()
	_, ok := m.kinds[kind]
	j := m.current[kind]
	bad := m.badCmd[kind]
	m.mu.Unlock()
	if !ok {
		return Status{}, fmt.Errorf("%w %q", ErrUnknownKind, kind)
	}
	st := Status{Kind: kind, State: StateIdle}
	if j != nil {
		st = j.Status()
	}
	st.LastCommandError = bad
	return st, nil
}

// List returns Status for every kind, sorted by kind.
func (m *Manager) List() []Status {
	var out []Status
	for _, k := range m.Kinds() {
		if st, err := m.Status(k); err == nil {
			out = append(out, st)
		}
	}
	return out
}

// Wait waits for j to end and returns its final status; if ctx ends
// first it returns ctx's error (the job goes on).
func (m *Manager) Wait(ctx context.Context, j *Job) (Status, error) {
	select {
	case <-j.Done():
		return j.Status(), nil
	case <-ctx.Done():
		return j.Status(), ctx.Err()
	}
}

// Close cancels every running job, waits for them to end and refuses
// new ones.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, j := range m.current {
		if j.cancel != nil {
			j.cancel()
		}
	}
	m.mu.Unlock()
	m.wg.Wait()
}
