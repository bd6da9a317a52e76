package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
)

// Dispatcher delivers events to the configured destinations, each in
// its own goroutine and queue, in the order they came: a destination
// that hangs or fails holds up only its own notifications, never the
// caller and never another destination.
type Dispatcher struct {
	log   *slog.Logger
	opts  Options
	dests []*dest
	// ctx ends deliveries: cancelled when Close's context ends.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// dest is one destination with its queue.
type dest struct {
	name  string
	kinds map[runlog.EventKind]bool
	send  func(context.Context, runlog.Event) error
	// timeout bounds one attempt (0: Options.Timeout).
	timeout time.Duration

	mu      sync.Mutex
	queue   []runlog.Event
	closing bool
	wake    chan struct{} // a token when queue or closing changed
}

// New starts a dispatcher of opts' destinations, logging to logger. A
// destination whose options do not pass Validate is left out and
// logged.
func New(opts Options, logger *slog.Logger) *Dispatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &Dispatcher{log: logger, opts: opts.withDefaults()}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	for i, w := range opts.Webhooks {
		h, err := compileWebhook(w, i)
		if err != nil {
			logger.Error("notification destination left out", "err", err)
			continue
		}
		d.add(&dest{name: h.name, kinds: h.kinds, send: h.send, timeout: h.timeout})
	}
	if opts.Mail != nil {
		m, err := newMailer(*opts.Mail)
		if err != nil {
			logger.Error("notification destination left out", "err", err)
		} else {
			d.add(&dest{name: "mail", kinds: m.kinds, send: m.send})
		}
	}
	return d
}

func (d *Dispatcher) add(s *dest) {
	s.wake = make(chan struct{}, 1)
	if s.timeout <= 0 {
		s.timeout = d.opts.Timeout
	}
	d.dests = append(d.dests, s)
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.run(s)
	}()
}

// Notify queues ev for every destination that wants its kind. It never
// blocks: a full queue drops its oldest notification (logged).
func (d *Dispatcher) Notify(ev runlog.Event) {
	for _, s := range d.dests {
		if s.kinds[ev.Kind] {
			d.push(s, ev)
		}
	}
}

func (d *Dispatcher) push(s *dest, ev runlog.Event) {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		d.log.Warn("notification dropped: the notifier is closed", "to", s.name, "event", ev.Kind, "summary", ev.Summary)
		return
	}
	var dropped *runlog.Event
	if len(s.queue) >= d.opts.QueueSize {
		old := s.queue[0]
		dropped = &old
		s.queue = append(s.queue[:0], s.queue[1:]...)
	}
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	signal(s.wake)
	if dropped != nil {
		d.log.Warn("notification dropped: queue full", "to", s.name, "queue", d.opts.QueueSize,
			"event", dropped.Kind, "summary", dropped.Summary)
	}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// run delivers s's notifications one after the other until it is
// closed and drained, or the dispatcher's context ends.
func (d *Dispatcher) run(s *dest) {
	for {
		ev, ok := d.next(s)
		if !ok {
			return
		}
		d.deliver(s, ev)
	}
}

// next waits for s's next notification; false when there is none to
// come.
func (d *Dispatcher) next(s *dest) (runlog.Event, bool) {
	for {
		s.mu.Lock()
		if d.ctx.Err() != nil {
			if n := len(s.queue); n > 0 {
				d.log.Error("notifications not delivered: the notifier was stopped", "to", s.name, "count", n)
			}
			s.queue = nil
			s.mu.Unlock()
			return runlog.Event{}, false
		}
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, true
		}
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return runlog.Event{}, false
		}
		select {
		case <-s.wake:
		case <-d.ctx.Done():
		}
	}
}

// deliver tries ev until it is delivered, the attempts are spent, the
// error is one another attempt cannot mend, or the dispatcher stops.
func (d *Dispatcher) deliver(s *dest, ev runlog.Event) {
	wait := d.opts.Backoff
	log := d.log.With("to", s.name, "event", ev.Kind, "summary", ev.Summary)
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(d.ctx, s.timeout)
		err := s.send(ctx, ev)
		cancel()
		if err == nil {
			log.Debug("notification delivered", "attempt", attempt)
			return
		}
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= d.opts.Attempts || d.ctx.Err() != nil {
			log.Error("notification not delivered", "attempts", attempt, "err", err)
			return
		}
		log.Warn("notification failed, will retry", "attempt", attempt, "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-d.ctx.Done():
			t.Stop()
			log.Error("notification not delivered: the notifier was stopped", "attempts", attempt, "err", err)
			return
		}
		wait *= 2
	}
}

// Close stops taking notifications and waits until those queued are
// delivered (or given up) or ctx ends; then it stops what is in flight
// and returns ctx's error. Notify after Close drops (and logs).
func (d *Dispatcher) Close(ctx context.Context) error {
	for _, s := range d.dests {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		signal(s.wake)
	}
	done := make(chan struct{})
	go func() {
		d.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		d.cancel()
		return nil
	case <-ctx.Done():
		d.cancel()
		<-done
		return fmt.Errorf("notify: closing: %w", ctx.Err())
	}
}

// permanentError is a failure another attempt would repeat.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

func permanent(err error) error { return &permanentError{err} }
