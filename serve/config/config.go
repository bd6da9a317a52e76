package config

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/serve/calendar"
)

// Bounds of a configuration file.
const (
	MaxFileSize = 1 << 20 // bytes
	MaxJobs     = 1000
	MaxStale    = 10000
	MaxWebhooks = 100
)

// Defaults.
const (
	DefaultListen   = "127.0.0.1:9817"
	ListenOff       = "off"
	DefaultSendmail = "sendmail"
	DefaultStateDir = ".cairn-serve" // inside the store
)

// Notification events.
const (
	EventStarted   = "started"
	EventSucceeded = "succeeded"
	EventFailed    = "failed"
	EventStale     = "stale"
	EventFresh     = "fresh"
)

// Job kinds.
var Kinds = []string{"backup", "verify", "prune", "gc", "sync", "tape-export"}

// DefaultEvents are the events notified when a notifier names none.
var DefaultEvents = []string{EventFailed, EventStale, EventFresh}

// Config is a parsed, checked configuration file.
type Config struct {
	Path   string // file it was read from
	Store  string // store directory; optional (the --store flag / CAIRN_STORE win)
	HTTP   HTTP
	Mount  Mount
	Jobs   []Job
	Stale  []Stale
	Notify Notify
	State  string // directory for the daemon's journal/history; default: inside the store (".cairn-serve")
}

// HTTP is the status page's and metrics' listener.
type HTTP struct {
	Listen      string // default "127.0.0.1:9817"; "off" disables
	MetricsFile string // optional, node_exporter textfile
}

// Mount is the mount the daemon keeps.
type Mount struct {
	Dir string // optional: keep the store mounted here
}

// Job is one scheduled job.
type Job struct {
	Name         string // unique; default "<kind>" or "<kind>-<n>" when several
	Kind         string // backup | verify | prune | gc | sync | tape-export
	Schedule     *calendar.Event
	ScheduleText string
	Params       map[string]string // the kind's key=value parameters, as its .jobs/<kind>/control lines take them
	Namespace    string            // backup only: the group's namespace ("a/b")
	Group        string            // backup only: "TYPE/ID"
	Sources      []string          // backup only: NAME.pxar:DIR / NAME.img:PATH / NAME.blob:PATH, as `cairn backup` takes them
	CatchUp      bool              // default true: run once after downtime if a run was missed
	Line         int               // line of the [[job]] table, for messages
}

// Stale is a group watched for staleness: its newest snapshot older
// than MaxAge is stale.
type Stale struct {
	Namespace, Group string // group "TYPE/ID"
	MaxAge           time.Duration
	Line             int
}

// Notify is where notifications go.
type Notify struct {
	Webhooks []Webhook
	Mail     *Mail // nil: no mail
}

// Webhook is an HTTP request made for each event it names.
type Webhook struct {
	Name, URL, Method, ContentType string
	Headers                        map[string]string
	Template                       string
	Events                         []string // ⊆ started, succeeded, failed, stale, fresh; default failed, stale, fresh
	Line                           int
}

// Mail is a mail sent through sendmail for each event it names.
type Mail struct {
	To       []string
	From     string
	Sendmail string // default "sendmail", looked up in PATH at send time
	Events   []string
	Line     int
}

// StateDir is the daemon's state directory: State, or DefaultStateDir
// inside store.
func (c *Config) StateDir(store string) string {
	if c.State != "" {
		return c.State
	}
	return filepath.Join(store, DefaultStateDir)
}

// Load reads and parses the file at path.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("configuration: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", path, err)
	}
	return Parse(path, data)
}

// Parse parses and checks a configuration file's contents; path names
// it in errors. Errors are *Error values (several joined with
// errors.Join), each naming the line and the field.
func Parse(path string, data []byte) (*Config, error) {
	if len(data) > MaxFileSize {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("larger than %d bytes", MaxFileSize), Err: ErrInvalid}
	}
	raw, err := decode(path, data)
	if err != nil {
		return nil, err
	}
	l := keyLines(data)
	if errs := l.caseErrors(path); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	v := newValidator(path, l)
	c := v.config(raw)
	if err := v.err(); err != nil {
		return nil, err
	}
	return c, nil
}
