package notify

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/cairnfs/cairn/serve/runlog"
)

// Options says where notifications go and how hard to try.
type Options struct {
	Webhooks []Webhook
	Mail     *Mail // nil: no mail

	// Timeout bounds one attempt (an HTTP request, a run of sendmail);
	// default 30s.
	Timeout time.Duration
	// Attempts is how often a notification is tried before it is given
	// up (logged); default 5.
	Attempts int
	// Backoff is the wait before the second attempt, doubled before each
	// further one; default 40s (5 attempts span 10 minutes).
	Backoff time.Duration
	// QueueSize bounds the notifications waiting for each destination;
	// when full, the oldest is dropped (and logged). Default 100.
	QueueSize int
}

// Webhook is an HTTP endpoint that is sent events.
type Webhook struct {
	Name string // in logs; default "webhook N"
	// URL is a text/template over the Event (a plain URL is one), so
	// that a ping service's path can depend on the event.
	URL         string
	Method      string            // default POST
	ContentType string            // default application/json
	Headers     map[string]string // values are templates too
	// Template makes the request's body from the Event; default: the
	// Event as JSON.
	Template string
	// Events are the kinds sent (started, succeeded, failed, stale,
	// fresh); default failed, stale, fresh.
	Events []string
	// Timeout bounds one request to this webhook; default
	// Options.Timeout.
	Timeout time.Duration
}

// Mail is mail sent through the local sendmail.
type Mail struct {
	To   []string
	From string // default cairn@HOSTNAME
	// Sendmail is the program (a path, or a name looked up in PATH, then
	// in /usr/sbin and /usr/lib); default "sendmail". It is run as
	// `sendmail -t -oi` with the message on its standard input.
	Sendmail string
	Events   []string // as Webhook.Events
}

// Defaults of Options.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultAttempts  = 5
	DefaultBackoff   = 40 * time.Second
	DefaultQueueSize = 100
)

// maxQueue and maxAttempts bound what a configuration can ask for.
const (
	maxQueue    = 100000
	maxAttempts = 100
)

// defaultEvents are the kinds sent when a destination names none:
// what someone must hear about.
var defaultEvents = []string{string(runlog.EventFailed), string(runlog.EventStale), string(runlog.EventFresh)}

var eventKinds = []runlog.EventKind{runlog.EventStarted, runlog.EventSucceeded, runlog.EventFailed, runlog.EventStale, runlog.EventFresh}

// withDefaults returns o with its zero fields set to their defaults.
func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	o.Attempts = min(o.Attempts, maxAttempts)
	o.QueueSize = min(o.QueueSize, maxQueue)
	return o
}

// Validate checks the options as a configuration file gives them: each
// error names the destination and the field. New leaves out (and logs)
// a destination that does not pass.
func (o Options) Validate() error {
	var errs []error
	if o.Timeout < 0 || o.Attempts < 0 || o.Backoff < 0 || o.QueueSize < 0 {
		errs = append(errs, errors.New("notify: timeout, attempts, backoff and queue size cannot be negative"))
	}
	if o.Attempts > maxAttempts || o.QueueSize > maxQueue {
		errs = append(errs, fmt.Errorf("notify: at most %d attempts and a queue of %d", maxAttempts, maxQueue))
	}
	for i, w := range o.Webhooks {
		if _, err := compileWebhook(w, i); err != nil {
			errs = append(errs, err)
		}
	}
	if o.Mail != nil {
		if _, err := newMailer(*o.Mail); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// kinds parses a destination's event kinds (none: the default ones).
func kinds(names []string) (map[runlog.EventKind]bool, error) {
	if len(names) == 0 {
		names = defaultEvents
	}
	set := map[runlog.EventKind]bool{}
	for _, n := range names {
		k := runlog.EventKind(strings.ToLower(strings.TrimSpace(n)))
		known := false
		for _, e := range eventKinds {
			known = known || k == e
		}
		if !known {
			return nil, fmt.Errorf("events: unknown event %q (want started, succeeded, failed, stale or fresh)", n)
		}
		set[k] = true
	}
	return set, nil
}

// checkHeader refuses a header value that would end the header: a CR
// or LF in it would let text from a configuration or an event write
// headers of its own (or the body).
func checkHeader(field, value string) error {
	if strings.ContainsAny(value, "\r\n") {
		return fmt.Errorf("%s: %q holds a line break", field, value)
	}
	return nil
}

// checkAddress checks one mail address and returns it as it goes in a
// header.
func checkAddress(field, a string) (string, error) {
	if err := checkHeader(field, a); err != nil {
		return "", err
	}
	addr, err := mail.ParseAddress(a)
	if err != nil {
		return "", fmt.Errorf("%s: %q is not a mail address: %w", field, a, err)
	}
	return addr.String(), nil
}
