package cli

import (
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/fs"
	"github.com/cairnfs/cairn/internal/buildinfo"
	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/jobs/prune"
	"github.com/cairnfs/cairn/jobs/restore"
	"github.com/cairnfs/cairn/jobs/storesync"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/cairnfs/cairn/jobs/verify"
	"github.com/cairnfs/cairn/store/backupsum"
	"github.com/cairnfs/cairn/store/forget"
	"github.com/cairnfs/cairn/store/pxar/browse"
	"github.com/cairnfs/cairn/store/snapdiff"
	"github.com/cairnfs/cairn/store/snaplist"
	"github.com/cairnfs/cairn/store/usage"
)

// jsonOutputs are the types printed by --json and written to .jobs/*/status
// and .stats, with the section of docs/json.md that documents each.
var jsonOutputs = []struct {
	section string
	v       any
}{
	{"Job status", jobs.Status{}},
	{"verify", verify.Report{}},
	{"prune", prune.Report{}},
	{"gc", gc.Report{}},
	{"sync", storesync.Report{}},
	{"tape export", tape.ExportJobReport{}},
	{"tape restore", tape.RestoreJobReport{}},
	{"Mount statistics", fs.Stats{}},
	{"backup", backupsum.Summary{}},
	{"restore", restore.ImageSummary{}},
	{"restore", restore.TreeSummary{}},
	{"snapshots", snaplist.Row{}},
	{"ls", snaplist.SnapshotArchives{}},
	{"ls", browse.Listing{}},
	{"find", browse.Listing{}},
	{"snapshots", snaplist.Group{}},
	{"init", initResult{}},
	{"forget", forget.Report{}},
	{"tape status", tape.DriveStatus{}},
	{"tape catalog", tape.CatalogSet{}},
	{"diff", snapdiff.Report{}},
	{"du", usage.Listing{}},
	{"version", buildinfo.Info{}},
	{"key show", keyInfo{}},
}

var snakeKey = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// jsonKeys lists the keys a type encodes to, "Type.key", walking into
// nested structs, slices, pointers and embedded structs.
func jsonKeys(t reflect.Type, seen map[reflect.Type]bool, add func(owner, key string)) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[time.Time]() {
		return
	}
	seen[t] = true
	for f := range t.Fields() {
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" {
			jsonKeys(f.Type, seen, add)
			continue
		}
		add(t.Name(), tag)
		jsonKeys(f.Type, seen, add)
	}
}

// documented tells whether a table row of sec names key in its first
// cell ("| `key` |" or "| `a`, `key` |").
func documented(sec, key string) bool {
	for line := range strings.Lines(sec) {
		if cell, ok := strings.CutPrefix(line, "| "); ok {
			cell, _, _ = strings.Cut(cell, " |")
			if strings.Contains(cell, "`"+key+"`") {
				return true
			}
		}
	}
	return false
}

// TestJSONKeysSnakeCaseAndDocumented holds every key of every JSON output
// to snake_case (an untagged field would print as its Go name) and to a
// line in docs/json.md, in the output's section.
func TestJSONKeysSnakeCaseAndDocumented(t *testing.T) {
	raw, err := os.ReadFile("../../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	for _, o := range jsonOutputs {
		start := strings.Index(doc, "\n## "+o.section)
		if start < 0 {
			t.Errorf("docs/json.md has no section %q", o.section)
			continue
		}
		sec := doc[start+1:]
		if end := strings.Index(sec[3:], "\n## "); end >= 0 {
			sec = sec[:end+3]
		}
		jsonKeys(reflect.TypeOf(o.v), map[reflect.Type]bool{}, func(owner, key string) {
			if !snakeKey.MatchString(key) {
				t.Errorf("%s: %s.%q is not snake_case", o.section, owner, key)
			}
			if !documented(sec, key) {
				t.Errorf("docs/json.md, section %q: %s.%s is not documented", o.section, owner, key)
			}
		})
	}
}
