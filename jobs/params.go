package jobs

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/cairnfs/cairn/store"
)

// Sentinel errors of commands and parameters, matched with errors.Is.
var (
	ErrBadCommand = errors.New("bad command")
	ErrBadParam   = errors.New("bad parameter")
)

// Op is what a control command asks for.
type Op string

// Control operations.
const (
	OpStart  Op = "start"
	OpCancel Op = "cancel"
)

// Command is one parsed line of a .jobs/<kind>/control file.
type Command struct {
	Op     Op
	Params map[string]string
}

var keyRE = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// ParseControl parses "start [key=value …]" or "cancel". A key given
// without "=value" means key=true. Errors name the offending word.
func ParseControl(line string) (Command, error) {
	words := strings.Fields(line)
	if len(words) == 0 {
		return Command{}, fmt.Errorf("%w: empty line: want \"start [key=value …]\" or \"cancel\"", ErrBadCommand)
	}
	switch Op(words[0]) {
	case OpCancel:
		if len(words) > 1 {
			return Command{}, fmt.Errorf("%w: \"cancel\" takes no arguments, got %q", ErrBadCommand, words[1])
		}
		return Command{Op: OpCancel}, nil
	case OpStart:
		params, err := ParseParams(words[1:])
		if err != nil {
			return Command{}, err
		}
		return Command{Op: OpStart, Params: params}, nil
	}
	return Command{}, fmt.Errorf("%w: unknown word %q: want \"start [key=value …]\" or \"cancel\"", ErrBadCommand, words[0])
}

// ParseParams turns key=value words into a map. A bare key means
// key=true; a key given twice is an error.
func ParseParams(words []string) (map[string]string, error) {
	params := map[string]string{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			v = "true"
		}
		if !keyRE.MatchString(k) {
			return nil, fmt.Errorf("%w: %q: want key=value with a lower-case key", ErrBadParam, w)
		}
		if _, dup := params[k]; dup {
			return nil, fmt.Errorf("%w: %q given twice", ErrBadParam, k)
		}
		params[k] = v
	}
	return params, nil
}

// formatParams prints params as sorted key=value words.
func formatParams(p map[string]string) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + p[k])
	}
	if b.Len() == 0 {
		return "no parameters"
	}
	return b.String()
}

// Params reads a kind's parameters, remembering which keys were used so
// that Done can refuse the unknown ones. The first error sticks.
type Params struct {
	kind string
	m    map[string]string
	used map[string]bool
	err  error
}

// NewParams wraps the parameters given to kind.
func NewParams(kind string, m map[string]string) *Params {
	return &Params{kind: kind, m: m, used: map[string]bool{}}
}

func (p *Params) get(key string) (string, bool) {
	p.used[key] = true
	v, ok := p.m[key]
	return v, ok
}

func (p *Params) fail(key, v, want string) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %s %s=%q: want %s", ErrBadParam, p.kind, key, v, want)
	}
}

// String returns the value of key, or def.
func (p *Params) String(key, def string) string {
	if v, ok := p.get(key); ok {
		return v
	}
	return def
}

// Int returns the integer value of key within [lo, hi], or def.
func (p *Params) Int(key string, def, lo, hi int) int {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		p.fail(key, v, fmt.Sprintf("an integer from %d to %d", lo, hi))
		return def
	}
	return n
}

// Bool returns the boolean value of key (true/false, yes/no, 1/0), or def.
func (p *Params) Bool(key string, def bool) bool {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true", "yes", "1", "on":
		return true
	case "false", "no", "0", "off":
		return false
	}
	p.fail(key, v, "true or false")
	return def
}

// Enum returns the value of key, which must be one of choices, or def.
func (p *Params) Enum(key, def string, choices ...string) string {
	v, ok := p.get(key)
	if !ok {
		return def
	}
	if !slices.Contains(choices, v) {
		p.fail(key, v, "one of "+strings.Join(choices, ", "))
		return def
	}
	return v
}

// Selector reads the snapshot selection shared by the kinds that work
// on snapshots: ns=NS (that namespace and those below it) and
// snapshots=REF[,REF…] (refs without a namespace are taken in ns).
func (p *Params) Selector() store.Selector {
	ns := store.NS(strings.Trim(p.String("ns", ""), "/"))
	refs := p.String("snapshots", "")
	if err := ns.Check(); err != nil {
		p.failErr("ns", ns, err)
		return store.Selector{NS: ns}
	}
	sel, err := store.ParseSelector(ns, strings.Split(refs, ","))
	if err != nil {
		p.failErr("snapshots", "", err)
	}
	return sel
}

// failErr records a parameter's error with the value's own error.
func (p *Params) failErr(key string, v any, err error) {
	if p.err == nil {
		p.err = fmt.Errorf("%w: %s %s=%q: %w", ErrBadParam, p.kind, key, v, err)
	}
}

// SelectorParams adds sel to a kind's key=value parameters as Selector
// reads them back.
func SelectorParams(m map[string]string, sel store.Selector) {
	if sel.NS != "" {
		m["ns"] = string(sel.NS)
	}
	if len(sel.Refs) > 0 {
		m["snapshots"] = strings.Join(sel.RefStrings(), ",")
	}
}

// Done returns the first error, or an error naming a key no reader asked
// for.
func (p *Params) Done() error {
	if p.err != nil {
		return p.err
	}
	var unknown []string
	for k := range p.m {
		if !p.used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		var known []string
		for k := range p.used {
			known = append(known, k)
		}
		slices.Sort(known)
		return fmt.Errorf("%w: %s has no parameter %q (known: %s)", ErrBadParam, p.kind, unknown[0], strings.Join(known, ", "))
	}
	return nil
}

// RefString prints a Ref as the command line names it.
func RefString(r store.Ref) string {
	if r.Latest {
		return r.Group.String() + "/latest"
	}
	return r.Snapshot.String()
}
