package config

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// lines maps the path of every table and key of the file to its line:
// "http.listen", "job.0" (the first [[job]] table), "job.0.schedule".
// Only a file the decoder accepted is read, so its tables are the
// decoded ones in order.
type lines map[string]int

// keyLines finds the lines of a file's tables and keys.
func keyLines(data []byte) lines {
	var newlines []int
	for i, b := range data {
		if b == '\n' {
			newlines = append(newlines, i)
		}
	}
	lineOf := func(off uint32) int { return sort.SearchInts(newlines, int(off)) + 1 }
	out := lines{}
	counts := map[string]int{}
	table := ""
	var p unstable.Parser
	p.Reset(data)
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			raw, off := keyPath(e.Key())
			name := arrayElements(raw, counts)
			if e.Kind == unstable.ArrayTable {
				n := counts[raw]
				counts[raw] = n + 1
				name += "." + strconv.Itoa(n)
			}
			table = name
			out[table] = lineOf(off)
		case unstable.KeyValue:
			name, off := keyPath(e.Key())
			if table != "" {
				name = table + "." + name
			}
			out[name] = lineOf(off)
			inlineKeys(out, name, e.Value(), lineOf, 0)
		}
	}
	return out
}

// inlineKeys records the keys of inline tables in v, also in arrays
// (job = [{kind = "gc", …}]), down to a depth the file's tables have.
func inlineKeys(out lines, name string, v *unstable.Node, lineOf func(uint32) int, depth int) {
	if depth > 4 {
		return
	}
	switch v.Kind {
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			key, off := keyPath(kv.Key())
			out[name+"."+key] = lineOf(off)
			inlineKeys(out, name+"."+key, kv.Value(), lineOf, depth+1)
		}
	case unstable.Array:
		i := 0
		for it := v.Children(); it.Next(); {
			if n := it.Node(); n.Kind == unstable.InlineTable {
				out[name+"."+strconv.Itoa(i)] = lineOf(n.Raw.Offset)
				inlineKeys(out, name+"."+strconv.Itoa(i), n, lineOf, depth+1)
				i++
			} else if n.Kind != unstable.Comment {
				i++
			}
		}
	}
}

// freeKeys are the tables whose keys are the user's own.
var freeKeys = map[string]bool{"job.params": true, "notify.webhook.headers": true}

// caseErrors finds the keys the decoder took although they differ from
// the file's keys in case only (it matches names as encoding/json does):
// the file's keys are lower-case, and a "Schedule" is unknown.
func (l lines) caseErrors(path string) []error {
	var errs []error
	for key, line := range l {
		var parts []string // the key without array indices
		for p := range strings.SplitSeq(key, ".") {
			if _, err := strconv.Atoi(p); err != nil {
				parts = append(parts, p)
			}
		}
		for i, p := range parts {
			parent := strings.Join(parts[:i], ".")
			if freeKeys[parent] {
				break
			}
			known, ok := knownKeys[parent]
			if !ok || slices.Contains(strings.Split(known, ", "), p) {
				continue
			}
			errs = append(errs, &Error{Path: path, Line: line, Field: keyName(parts[:i+1]), Msg: "unknown key (known: " + known + ")"})
			break
		}
	}
	slices.SortFunc(errs, func(a, b error) int { return a.(*Error).Line - b.(*Error).Line })
	return errs[:min(len(errs), maxErrors)]
}

// keyPath joins a key's parts with dots and returns its offset.
func keyPath(it unstable.Iterator) (string, uint32) {
	var b strings.Builder
	var off uint32
	first := true
	for it.Next() {
		n := it.Node()
		if first {
			off = n.Raw.Offset
		} else {
			b.WriteByte('.')
		}
		first = false
		b.Write(n.Data)
	}
	return b.String(), off
}

// line returns the line of the first of keys the file has, else of the
// nearest key above the first that it has ("job" for "job.0" when the
// jobs are an inline array), else 0.
func (l lines) line(keys ...string) int {
	for _, k := range keys {
		if n, ok := l[k]; ok {
			return n
		}
	}
	for k := keys[0]; ; {
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			return 0
		}
		k = k[:i]
		if n, ok := l[k]; ok {
			return n
		}
	}
}

// arrayElements names the tables below an array of tables by its last
// element, as TOML does: [job.params] after two [[job]] is "job.1.params".
func arrayElements(name string, counts map[string]int) string {
	parts := strings.Split(name, ".")
	out := make([]string, 0, 2*len(parts))
	for i, p := range parts {
		out = append(out, p)
		if n := counts[strings.Join(parts[:i+1], ".")]; n > 0 && i < len(parts)-1 {
			out = append(out, strconv.Itoa(n-1))
		}
	}
	return strings.Join(out, ".")
}
