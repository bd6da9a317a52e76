package config

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/jobs/gc"
	"github.com/cairnfs/cairn/jobs/prune"
	"github.com/cairnfs/cairn/jobs/storesync"
	"github.com/cairnfs/cairn/jobs/tape"
	"github.com/cairnfs/cairn/jobs/verify"
)

// TestExample: contrib/serve.toml.example loads, as the README shows it,
// every job's parameters are ones its kind takes, and the defaults are
// filled in.
func TestExample(t *testing.T) {
	const path = "../../contrib/serve.toml.example"
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Path != path || c.Store != "/srv/cairn-store" || c.State != "/var/lib/cairn-serve" ||
		c.HTTP.Listen != DefaultListen || c.Mount.Dir != "/mnt/cairn" {
		t.Errorf("top level: %+v", c)
	}
	var names []string
	for _, j := range c.Jobs {
		names = append(names, j.Name)
		if j.Schedule == nil || j.Line == 0 {
			t.Errorf("job %s: schedule %v, line %d", j.Name, j.Schedule, j.Line)
		}
		if err := kindParams(j.Kind, j.Params); err != nil {
			t.Errorf("job %s: %v", j.Name, err)
		}
	}
	if want := []string{"nightly", "verify-weekly", "prune", "gc", "sync", "tape-export"}; !slices.Equal(names, want) {
		t.Errorf("job names %q, want %q", names, want)
	}
	if j := c.Jobs[0]; j.Group != "host/web" || j.Namespace != "prod" || len(j.Sources) != 4 || !j.CatchUp || j.ScheduleText != "mon..fri 02:00" {
		t.Errorf("backup job: %+v", j)
	}
	if c.Jobs[3].CatchUp {
		t.Error("gc: catch_up = false not taken")
	}
	if len(c.Stale) != 2 || c.Stale[0].MaxAge != 26*time.Hour || c.Stale[1].MaxAge != 8*24*time.Hour {
		t.Errorf("stale: %+v", c.Stale)
	}
	if len(c.Notify.Webhooks) != 1 || c.Notify.Mail == nil || c.Notify.Mail.Sendmail != "/usr/sbin/sendmail" {
		t.Errorf("notify: %+v", c.Notify)
	}
}

// kindParams checks a job's parameters with its kind's own parser.
func kindParams(kind string, m map[string]string) error {
	var err error
	switch kind {
	case "verify":
		_, err = verify.ParseParams(m)
	case "prune":
		_, err = prune.ParseParams(m)
	case "gc":
		_, err = gc.ParseParams(m)
	case "sync":
		_, err = storesync.ParseParams(m)
	case "tape-export":
		_, err = tape.ParseExportParams(m)
	}
	return err
}

// TestReadmeExample: the configuration README.md shows under "Running
// unattended" loads, with every part it shows.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "## Running unattended\n")
	_, block, ok2 := strings.Cut(sec, "```toml\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`README.md has no toml block under "## Running unattended"`)
	}
	c, err := Parse("README.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Jobs) < 4 || len(c.Stale) == 0 || len(c.Notify.Webhooks) == 0 || c.Notify.Mail == nil {
		t.Errorf("the README's example lost a part: %+v", c)
	}
}
