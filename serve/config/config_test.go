package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/serve/calendar"
	"github.com/cairnfs/cairn/store"
)

const path = "/etc/cairn/serve.toml"

func TestDefaults(t *testing.T) {
	c, err := Parse(path, []byte("[[job]]\nkind = \"gc\"\nschedule = \"daily\"\n\n[[job]]\nkind = \"verify\"\nschedule = \"sat 03:00\"\n[[job]]\nkind = \"verify\"\nschedule = \"sun 03:00\"\n"+
		"[[notify.webhook]]\nurl = \"http://[::1]:8080/x\"\n[notify.mail]\nto = [\"Ops <ops@example.org>\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.HTTP.Listen != DefaultListen || c.Store != "" || c.StateDir("/s") != "/s/.cairn-serve" {
		t.Errorf("defaults: %+v", c)
	}
	for i, want := range []struct {
		name string
		line int
	}{{"gc", 1}, {"verify-1", 5}, {"verify-2", 8}} {
		j := c.Jobs[i]
		if j.Name != want.name || j.Line != want.line || !j.CatchUp || len(j.Params) != 0 {
			t.Errorf("job %d: %+v, want name %s on line %d", i, j, want.name, want.line)
		}
	}
	if s := c.Jobs[1].Schedule.String(); s != "sat *-*-* 03:00:00" {
		t.Errorf("schedule %q", s)
	}
	w := c.Notify.Webhooks[0]
	if w.Name != "webhook" || w.Method != "POST" || w.ContentType != "application/json" || strings.Join(w.Events, ",") != "failed,stale,fresh" || w.Line != 11 {
		t.Errorf("webhook defaults: %+v", w)
	}
	if m := c.Notify.Mail; m.Sendmail != "sendmail" || strings.Join(m.Events, ",") != "failed,stale,fresh" || m.Line != 13 {
		t.Errorf("mail defaults: %+v", m)
	}
}

// TestInlineJobs: jobs written as an inline array have the line of
// their inline table.
func TestInlineJobs(t *testing.T) {
	c, err := Parse(path, []byte("store = '/s'\njob = [\n  {kind = 'gc', schedule = 'daily'},\n  {kind = 'verify', schedule = 'weekly'},\n]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Jobs[0].Line != 3 || c.Jobs[1].Line != 4 || c.Jobs[1].Name != "verify" {
		t.Errorf("jobs %+v", c.Jobs)
	}
	_, err = Parse(path, []byte("job = [\n  {kind = 'gc', schedule = 'daily'},\n  {kind = 'gc', schedule = 'dialy'},\n]\n"))
	if want := path + `:3: job "gc-2": schedule "dialy"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got %v, want %s…", err, want)
	}
}

func TestParams(t *testing.T) {
	c, err := Parse(path, []byte("[[job]]\nkind = \"sync\"\nschedule = \"hourly\"\nparams = { from = \"/a\", workers = 4, remove-vanished = true }\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Jobs[0].Params; p["from"] != "/a" || p["workers"] != "4" || p["remove-vanished"] != "true" || len(p) != 3 {
		t.Errorf("params %q", p)
	}
}

// gcJob is a valid job for the cases that break something else.
const gcJob = "[[job]]\nkind = \"gc\"\nschedule = \"daily\"\n"

// backupJob is a backup job whose lines 5 and on the cases fill.
const backupJob = "[[job]]\nname = \"nightly\"\nkind = \"backup\"\nschedule = \"daily\"\n"

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name, doc string
		want      string // the error's text from the line on
		cause     error
	}{
		// syntax
		{"syntax", "store = 'x\n", ":1: ", nil},
		{"syntax table", "[job\n", ":1: ", nil},
		{"duplicate key", "store = '/a'\nstore = '/b'\n", ":2: store: ", nil},
		// unknown keys
		{"unknown top", "bogus = 1\n", ":1: bogus: unknown key (known: store, state,", nil},
		{"unknown in job", gcJob + "shedule = 'x'\n", ":4: job.shedule: unknown key (known: name, kind, schedule,", nil},
		{"unknown in http", "[http]\nlisten = 'off'\nport = 80\n", ":3: http.port: unknown key (known: listen, metrics_file)", nil},
		{"unknown in mail", "[notify.mail]\nto = ['a@b.c']\ncc = ['x@y.z']\n", ":3: notify.mail.cc: unknown key", nil},
		{"unknown quoted", "\"a\\nb\" = 1\n", `:1: "a\nb": unknown key`, nil},
		{"key case", "[[joB]]\nkind = 'gc'\nsChedule = 'daily'\n", ":1: joB: unknown key (known: store,", nil},
		{"key case in job", gcJob + "Name = 'x'\n", ":4: job.Name: unknown key (known: name,", nil},
		{"key case in params", gcJob + "params = { Atime-cutoff = '0' }\n", `:4: job "gc": params.Atime-cutoff: want a lower-case key`, nil},
		{"key case inline", "job = [{kind = 'gc', schedule = 'daily'},\n  {Kind = 'gc', schedule = 'daily'}]\n", ":2: job.Kind: unknown key (known: name,", nil},
		// wrong types
		{"type string", "[[job]]\nkind = 'gc'\nschedule = 5\n", ":3: job.schedule: want a string, not an integer", nil},
		{"type bool", gcJob + "catch_up = 'yes'\n", ":4: job.catch_up: want true or false, not a string", nil},
		{"type list", "[[job]]\nkind = 'backup'\nsources = 'root.pxar:/'\n", ":3: job.sources: want a list of strings, not a string", nil},
		{"type tables", "job = 5\n", ":1: job: want tables ([[…]]), not an integer", nil},
		{"type table", "http = 'x'\n", ":1: http: want a table, not a string", nil},
		{"type headers", "[[notify.webhook]]\nurl = 'http://h'\nheaders = { a = 1 }\n", ":3: notify.webhook.headers: want a string, not an integer", nil},
		// schedules
		{"bad schedule", backupJob[:len(backupJob)-len("schedule = \"daily\"\n")] + "schedule = \"dialy\"\n", `:4: job "nightly": schedule "dialy": unknown word "dialy": want [WEEKDAYS]`, calendar.ErrSyntax},
		{"bad schedule column", gcJob[:len(gcJob)-len("schedule = \"daily\"\n")] + "schedule = \"mon 25:00\"\n", `:3: job "gc": schedule "mon 25:00": hour 25 out of range 0..23 (column 5)`, calendar.ErrSyntax},
		{"no schedule", "[[job]]\nkind = 'gc'\n", `:1: job "gc": schedule: missing`, nil},
		// kinds and names
		{"no kind", "[[job]]\nname = 'x'\nschedule = 'daily'\n", `:1: job "x": kind: missing: want one of backup, verify`, nil},
		{"unknown kind", "[[job]]\nkind = 'backpu'\nschedule = 'daily'\n", `:2: job "backpu": kind: unknown kind "backpu"`, nil},
		{"duplicate name", gcJob + "name = 'a'\n" + gcJob + "name = 'a'\n", `:8: job "a": name given twice (first on line 1)`, nil},
		{"duplicate default", gcJob + "name = 'gc-2'\n" + gcJob + gcJob, `:5: job "gc-2": name given twice (first on line 1)`, nil},
		{"unprintable name", gcJob + "name = \"a\\u0007b\"\n", `:4: job "a\ab": name: want letters, digits`, nil},
		{"name with space", gcJob + "name = 'night ly'\n", `:4: job "night ly": name: want letters`, nil},
		// backup groups and sources
		{"no group", backupJob + "sources = ['r.pxar:/']\n", `:1: job "nightly": group: missing: want TYPE/ID`, nil},
		{"group no slash", backupJob + "group = 'vm'\nsources = ['r.pxar:/']\n", `:5: job "nightly": group: "vm": want TYPE/ID`, store.ErrBadName},
		{"group type", backupJob + "group = 'vms/100'\nsources = ['r.pxar:/']\n", `:5: job "nightly": group: backup type "vms"`, store.ErrBadName},
		{"group id", backupJob + "group = 'vm/1 00'\nsources = ['r.pxar:/']\n", `:5: job "nightly": group: backup id "1 00"`, store.ErrBadName},
		{"group id slash", backupJob + "group = 'vm/1/2'\nsources = ['r.pxar:/']\n", `:5: job "nightly": group: backup id "1/2"`, store.ErrBadName},
		{"namespace", backupJob + "namespace = 'a//b'\ngroup = 'vm/1'\nsources = ['r.pxar:/']\n", `:5: job "nightly": namespace: namespace "a//b"`, store.ErrBadName},
		{"no sources", backupJob + "group = 'vm/1'\n", `:1: job "nightly": sources: missing`, nil},
		{"bad source", backupJob + "group = 'vm/1'\nsources = ['root:/']\n", `:6: job "nightly": sources: archive "root:/": want NAME.img:PATH`, nil},
		{"relative source", backupJob + "group = 'vm/1'\nsources = ['r.pxar:etc']\n", `:6: job "nightly": sources: "r.pxar:etc": want an absolute path`, nil},
		{"stdin source", backupJob + "group = 'vm/1'\nsources = ['d.img:-']\n", `:6: job "nightly": sources: "d.img:-": want an absolute path`, nil},
		{"source twice", backupJob + "group = 'vm/1'\nsources = ['d.img:/a', 'd.img:/b']\n", `:6: job "nightly": sources: archive d.img given twice`, nil},
		{"group on gc", gcJob + "group = 'vm/1'\n", `:4: job "gc": group: only backup jobs take it`, nil},
		// params
		{"param space", gcJob + "params = { atime-cutoff = '1 h' }\n", `:4: job "gc": params.atime-cutoff: "1 h": want a value of 1 to 4096 printable bytes without spaces`, nil},
		{"param newline", gcJob + "params = { atime-cutoff = \"1\\nstart\" }\n", `:4: job "gc": params.atime-cutoff: "1\nstart": want a value`, nil},
		{"param float", gcJob + "params = { atime-cutoff = 1.5 }\n", `:4: job "gc": params.atime-cutoff: want a string, an integer or true/false`, nil},
		{"param table", gcJob + "[job.params.x]\ny = 1\n", `:4: job "gc": params.x: want a string, an integer or true/false`, nil},
		{"param key", gcJob + "params = { Atime = '0' }\n", `:4: job "gc": params.Atime: want a lower-case key`, nil},
		// http and paths
		{"listen", "[http]\nlisten = 'localhost'\n", `:2: http.listen: "localhost": want HOST:PORT`, nil},
		{"listen port", "[http]\nlisten = ':99999'\n", `:2: http.listen: ":99999": want HOST:PORT`, nil},
		{"relative store", "store = 'cairn-store'\n", `:1: store: "cairn-store": want an absolute path`, nil},
		{"metrics file", "[http]\nmetrics_file = \"/x\\ny\"\n", `:2: http.metrics_file: "/x\ny": control characters in a path`, nil},
		{"mount dir", "[mount]\ndir = 'mnt'\n", `:2: mount.dir: "mnt": want an absolute path`, nil},
		// stale
		{"stale age", "[[stale]]\ngroup = 'vm/1'\nmax_age = '2x'\n", `:3: stale "vm/1": max_age "2x": want a duration`, nil},
		{"stale negative", "[[stale]]\ngroup = 'vm/1'\nmax_age = '-1h'\n", `:3: stale "vm/1": max_age "-1h": want a duration`, nil},
		{"stale zero", "[[stale]]\ngroup = 'vm/1'\nmax_age = '0d'\n", `:3: stale "vm/1": max_age "0d": want a duration`, nil},
		{"stale huge", "[[stale]]\ngroup = 'vm/1'\nmax_age = '99999999999999999999d'\n", `:3: stale "vm/1": max_age`, nil},
		{"stale no age", "[[stale]]\ngroup = 'vm/1'\n", `:1: stale "vm/1": max_age: missing`, nil},
		{"stale group", "[[stale]]\nnamespace = 'p'\ngroup = 'vm'\nmax_age = '1d'\n", `:3: stale "p/vm": group: "vm": want TYPE/ID`, store.ErrBadName},
		{"stale twice", "[[stale]]\ngroup = 'vm/1'\nmax_age = '1d'\n[[stale]]\ngroup = 'vm/1'\nmax_age = '2d'\n", `:5: stale "vm/1": watched twice (first on line 1)`, nil},
		// webhooks
		{"url scheme", "[[notify.webhook]]\nurl = 'ftp://h/x'\n", `:2: webhook "webhook": url "ftp://h/x": want an http:// or https:// URL`, nil},
		{"url host", "[[notify.webhook]]\nurl = 'https:///x'\n", `:2: webhook "webhook": url "https:///x": no host`, nil},
		{"url junk", "[[notify.webhook]]\nurl = 'http://h/%zz'\n", `:2: webhook "webhook": url "http://h/%zz": not a URL`, nil},
		{"url newline", "[[notify.webhook]]\nurl = \"http://h/\\r\\nX: y\"\n", `:2: webhook "webhook": url "http://h/\r\nX: y": not a URL`, nil},
		{"url missing", "[[notify.webhook]]\nname = 'a'\n", `:1: webhook "a": url: missing`, nil},
		{"header injection", "[[notify.webhook]]\nurl = 'http://h'\nheaders = { X-A = \"a\\r\\nX-B: c\" }\n", `:3: webhook "webhook": headers.X-A: want a header name`, nil},
		{"header name", "[[notify.webhook]]\nurl = 'http://h'\nheaders = { \"X A\" = 'a' }\n", `:3: webhook "webhook": headers."X A": want a header name`, nil},
		{"content type", "[[notify.webhook]]\nurl = 'http://h'\ncontent_type = \"text/plain\\nX: y\"\n", `:3: webhook "webhook": content_type: "text/plain\nX: y": control characters`, nil},
		{"method", "[[notify.webhook]]\nurl = 'http://h'\nmethod = 'DELETE'\n", `:3: webhook "webhook": method: "DELETE": want POST`, nil},
		{"events", "[[notify.webhook]]\nurl = 'http://h'\nevents = ['failed', 'exploded']\n", `:3: webhook "webhook": events: unknown event "exploded"`, nil},
		{"events empty", "[[notify.webhook]]\nurl = 'http://h'\nevents = []\n", `:3: webhook "webhook": events: empty`, nil},
		{"events twice", "[[notify.webhook]]\nurl = 'http://h'\nevents = ['stale', 'stale']\n", `:3: webhook "webhook": events: "stale" given twice`, nil},
		{"webhook names", "[[notify.webhook]]\nname = 'a'\nurl = 'http://h'\n[[notify.webhook]]\nname = 'a'\nurl = 'http://h'\n", `:5: webhook "a": name given twice (first on line 1)`, nil},
		// mail
		{"mail injection", "[notify.mail]\nto = [\"a@example.org\\nBcc: evil@example.org\"]\n", `:2: mail: to: "a@example.org\nBcc: evil@example.org": control characters or newlines`, nil},
		{"mail cr", "[notify.mail]\nto = ['a@example.org']\nfrom = \"x@example.org\\rBcc: e@x.y\"\n", `:3: mail: from: "x@example.org\rBcc: e@x.y": control characters`, nil},
		{"mail empty", "[notify.mail]\nto = ['']\n", `:2: mail: to: empty address`, nil},
		{"mail none", "[notify.mail]\nto = []\n", `:2: mail: to: missing`, nil},
		{"mail no to", "[notify.mail]\nfrom = 'a@b.c'\n", `:1: mail: to: missing`, nil},
		{"mail bad", "[notify.mail]\nto = ['not an address']\n", `:2: mail: to: "not an address": not a mail address`, nil},
		{"sendmail option", "[notify.mail]\nto = ['a@b.c']\nsendmail = '-oi'\n", `:3: mail: sendmail: "-oi": want a program`, nil},
		{"sendmail args", "[notify.mail]\nto = ['a@b.c']\nsendmail = '/usr/sbin/sendmail -t'\n", `:3: mail: sendmail: "/usr/sbin/sendmail -t": want a program`, nil},
	} {
		_, err := Parse(path, []byte(c.doc))
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), path+c.want) {
			t.Errorf("%s: %v\nwant %s%s…", c.name, err, path, c.want)
		}
		if c.cause != nil && !errors.Is(err, c.cause) {
			t.Errorf("%s: %v does not wrap %v", c.name, err, c.cause)
		}
	}
}

// TestSeveralErrors: each wrong field is reported, not only the first.
func TestSeveralErrors(t *testing.T) {
	_, err := Parse(path, []byte("store = 'rel'\n[[job]]\nkind = 'gc'\nschedule = 'dialy'\n"))
	msg := fmt.Sprint(err)
	if !strings.Contains(msg, path+":1: store:") || !strings.Contains(msg, path+`:4: job "gc": schedule "dialy"`) {
		t.Fatalf("got %v", err)
	}
}

func TestBounds(t *testing.T) {
	big := make([]byte, MaxFileSize+1)
	for i := range big {
		big[i] = '#'
	}
	if _, err := Parse(path, big); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), path+": larger than 1048576 bytes") {
		t.Errorf("too big: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "serve.toml")
	if err := os.WriteFile(file, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(file); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Load too big: %v", err)
	}
	if _, err := Load(filepath.Join(dir, "missing.toml")); err == nil || errors.Is(err, ErrInvalid) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load missing: %v", err)
	}
	var b strings.Builder
	for i := range MaxJobs + 1 {
		fmt.Fprintf(&b, "[[job]]\nname = 'j%d'\nkind = 'gc'\nschedule = 'daily'\n", i)
	}
	if _, err := Parse(path, []byte(b.String())); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d: job: more than 1000 jobs", path, 4*MaxJobs+1)) {
		t.Errorf("too many jobs: %v", err)
	}
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if _, err := Parse(path, []byte("store = "+deep+"\n")); !errors.Is(err, ErrInvalid) {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestParseAge(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"26h": 26 * time.Hour, "2d": 48 * time.Hour, "1d12h": 36 * time.Hour,
		"90m": 90 * time.Minute, "1d30m": 24*time.Hour + 30*time.Minute, "3660d": 3660 * 24 * time.Hour,
	} {
		if got, err := parseAge(s); err != nil || got != want {
			t.Errorf("parseAge(%q) = %v, %v, want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0", "0d", "d", "1dd", "+1d", "-1d", "1d-2h", "2x", "3661d", "1.5d", "1e3h", "100000h"} {
		if _, err := parseAge(s); err == nil {
			t.Errorf("parseAge(%q): no error", s)
		}
	}
}
