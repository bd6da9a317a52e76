package config

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/serve/calendar"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/backupsrc"
)

// Bounds of a job's lists.
const (
	maxParams  = 64
	maxSources = 256
	maxValue   = 4096 // bytes of a parameter's value
)

// nameRE is what a job's or webhook's name may be: printable, and
// usable in a file name and a metric's label.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// validator checks the decoded file, collecting errors with their lines.
type validator struct {
	path  string
	lines lines
	errs  []error
}

func newValidator(path string, l lines) *validator { return &validator{path: path, lines: l} }

// add records an error at the line of the first of keys the file has.
func (v *validator) add(keys []string, field, msg string, cause error) {
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, &Error{Path: v.path, Line: v.lines.line(keys...), Field: field, Msg: msg, Err: cause})
	}
}

func (v *validator) err() error { return errors.Join(v.errs...) }

// at lists the keys to look up for a key of a table: the key, else the
// keys it is below ("params.x", then "params"), else the table's header.
func at(table, key string) []string {
	var out []string
	for k := key; ; {
		out = append(out, strings.TrimPrefix(table+"."+k, "."))
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	if table != "" {
		out = append(out, table)
	}
	return out
}

func (v *validator) config(raw *rawConfig) *Config {
	c := &Config{Path: v.path}
	c.Store = v.absPath("", "store", raw.Store)
	c.State = v.absPath("", "state", raw.State)
	c.HTTP = v.http(raw.HTTP)
	c.Mount.Dir = v.absPath("mount", "dir", raw.Mount.Dir)
	if len(raw.Jobs) > MaxJobs {
		v.add([]string{fmt.Sprintf("job.%d", MaxJobs)}, "job", fmt.Sprintf("more than %d jobs", MaxJobs), nil)
		return c
	}
	c.Jobs = v.jobs(raw.Jobs)
	c.Stale = v.stales(raw.Stale)
	c.Notify = v.notify(raw.Notify)
	return c
}

// absPath checks an optional path: absolute, one line.
func (v *validator) absPath(table, key, p string) string {
	if p == "" {
		return ""
	}
	field := strings.TrimPrefix(table+"."+key, ".")
	switch {
	case !printable(p):
		v.add(at(table, key), field, fmt.Sprintf("%s: control characters in a path", quote(p)), nil)
	case !filepath.IsAbs(p):
		v.add(at(table, key), field, fmt.Sprintf("%s: want an absolute path", quote(p)), nil)
	}
	return filepath.Clean(p)
}

func (v *validator) http(raw rawHTTP) HTTP {
	h := HTTP{Listen: DefaultListen, MetricsFile: v.absPath("http", "metrics_file", raw.MetricsFile)}
	if raw.Listen == nil {
		return h
	}
	h.Listen = *raw.Listen
	if h.Listen == ListenOff {
		return h
	}
	_, port, err := net.SplitHostPort(h.Listen)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 1 || n > 65535 {
		v.add(at("http", "listen"), "http.listen", fmt.Sprintf("%s: want HOST:PORT (127.0.0.1:9817, [::1]:9817, :9817) or \"off\"", quote(h.Listen)), nil)
	}
	return h
}

// jobs checks the [[job]] tables and names the unnamed ones.
func (v *validator) jobs(raws []rawJob) []Job {
	perKind := map[string]int{}
	for _, r := range raws {
		perKind[r.Kind]++
	}
	nth := map[string]int{}
	names := map[string]int{} // name → line
	out := make([]Job, 0, len(raws))
	for i, r := range raws {
		table := fmt.Sprintf("job.%d", i)
		nth[r.Kind]++
		j := v.job(table, r, perKind[r.Kind], nth[r.Kind])
		if first, dup := names[j.Name]; dup {
			v.add(at(table, "name"), "job "+quote(j.Name), fmt.Sprintf("name given twice (first on line %d)", first), nil)
		}
		names[j.Name] = j.Line
		out = append(out, j)
	}
	return out
}

func (v *validator) job(table string, r rawJob, ofKind, nth int) Job {
	j := Job{Name: r.Name, Kind: r.Kind, Line: v.lines.line(table), CatchUp: true,
		Namespace: r.Namespace, Group: r.Group, Sources: r.Sources}
	switch {
	case j.Name != "":
	case ofKind > 1:
		j.Name = fmt.Sprintf("%s-%d", r.Kind, nth)
	default:
		j.Name = r.Kind
	}
	label := "job " + quote(j.Name)
	if r.Name != "" && !nameRE.MatchString(r.Name) {
		v.add(at(table, "name"), label+": name", "want letters, digits, \".\", \"_\" and \"-\", at most 64, starting with a letter or digit", nil)
	}
	switch {
	case r.Kind == "":
		v.add(at(table, "kind"), label+": kind", "missing: want one of "+strings.Join(Kinds, ", "), nil)
	case !slices.Contains(Kinds, r.Kind):
		v.add(at(table, "kind"), label+": kind", fmt.Sprintf("unknown kind %s: want one of %s", quote(r.Kind), strings.Join(Kinds, ", ")), nil)
	}
	j.Schedule, j.ScheduleText = v.schedule(table, label, r.Schedule)
	if r.CatchUp != nil {
		j.CatchUp = *r.CatchUp
	}
	j.Params = v.params(table, label, r.Params)
	if r.Kind == "backup" {
		v.backup(table, label, j)
	} else {
		for _, f := range []struct {
			key   string
			given bool
		}{{"namespace", r.Namespace != ""}, {"group", r.Group != ""}, {"sources", r.Sources != nil}} {
			if key := f.key; f.given {
				v.add(at(table, key), label+": "+key, "only backup jobs take it (other kinds select snapshots with params, e.g. ns=…)", nil)
			}
		}
	}
	return j
}

func (v *validator) schedule(table, label string, text *string) (*calendar.Event, string) {
	if text == nil {
		v.add(at(table, "schedule"), label+": schedule", "missing: want a calendar event such as \"daily\" or \"mon..fri 02:00\"", nil)
		return nil, ""
	}
	e, err := calendar.Parse(*text)
	if err != nil {
		msg := err.Error()
		var se *calendar.SyntaxError
		if errors.As(err, &se) {
			msg = fmt.Sprintf("%s (column %d)", se.Msg, se.Column)
		}
		v.add(at(table, "schedule"), label+": schedule "+quote(*text), msg, err)
		return nil, *text
	}
	return e, *text
}

// params turns the kind's parameters into the key=value words of a
// control line: a lower-case key, a value without spaces.
func (v *validator) params(table, label string, raw map[string]any) map[string]string {
	out := make(map[string]string, len(raw))
	if len(raw) > maxParams {
		v.add(at(table, "params"), label+": params", fmt.Sprintf("more than %d parameters", maxParams), nil)
		return out
	}
	for k, val := range raw {
		field := label + ": params." + keyName([]string{k})
		var s string
		switch x := val.(type) {
		case string:
			s = x
		case int64:
			s = strconv.FormatInt(x, 10)
		case bool:
			s = strconv.FormatBool(x)
		default:
			v.add(at(table, "params."+k), field, "want a string, an integer or true/false", nil)
			continue
		}
		if len(s) > maxValue || s == "" || strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) {
			v.add(at(table, "params."+k), field, fmt.Sprintf("%s: want a value of 1 to %d printable bytes without spaces", quote(s), maxValue), nil)
			continue
		}
		if _, err := jobs.ParseParams([]string{k + "=" + s}); err != nil {
			v.add(at(table, "params."+k), field, "want a lower-case key: letters, digits and \"-\"", err)
			continue
		}
		out[k] = s
	}
	return out
}

// backup checks a backup job's group and sources.
func (v *validator) backup(table, label string, j Job) {
	v.group(table, label, j.Namespace, j.Group)
	switch {
	case len(j.Sources) == 0:
		v.add(at(table, "sources"), label+": sources", "missing: want at least one of "+backupsrc.SpecForms, nil)
		return
	case len(j.Sources) > maxSources:
		v.add(at(table, "sources"), label+": sources", fmt.Sprintf("more than %d", maxSources), nil)
		return
	}
	specs, err := backupsrc.ParseSpecs(j.Sources)
	if err != nil {
		v.add(at(table, "sources"), label+": sources", clean(strings.TrimPrefix(err.Error(), backupsrc.ErrBadSpec.Error()+": ")), err)
		return
	}
	for _, sp := range specs {
		if sp.IsStdin() || !filepath.IsAbs(sp.Path) {
			v.add(at(table, "sources"), label+": sources", fmt.Sprintf("%s: want an absolute path (the daemon has no standard input or working directory of yours)", quote(sp.Name+":"+sp.Path)), nil)
		}
	}
}

// group checks a namespace and a "TYPE/ID" group as the store does.
func (v *validator) group(table, label, ns, group string) {
	if group == "" {
		v.add(at(table, "group"), label+": group", "missing: want TYPE/ID (vm/100, ct/101, host/web)", nil)
		return
	}
	typ, id, ok := strings.Cut(group, "/")
	if !ok {
		v.add(at(table, "group"), label+": group", fmt.Sprintf("%s: want TYPE/ID (vm/100, ct/101, host/web)", quote(group)), store.ErrBadName)
		return
	}
	g := store.Group{NS: store.NS(ns), Type: typ, ID: id}
	if err := g.NS.Check(); err != nil {
		v.add(at(table, "namespace"), label+": namespace", clean(err.Error()), err)
	} else if err := g.Check(); err != nil {
		v.add(at(table, "group"), label+": group", clean(err.Error()), err)
	}
}

// printable tells a one-line string without control characters.
func printable(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) || r == unicode.ReplacementChar })
}
