package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

type nopWork struct{}

func (nopWork) Run(context.Context, *Job) error { return nil }

func TestJobLogBounded(t *testing.T) {
	j := newJob("id", "test", nil, nopWork{}, slog.New(slog.DiscardHandler))
	for i := range MaxLogLines + 150 {
		j.Logf("line %d", i)
	}
	j.Logf("%s", strings.Repeat("x", 5000))
	for i := range MaxErrors + 5 {
		j.Errorf("error %d", i)
	}
	log := j.Log()
	if len(log) != MaxLogLines {
		t.Fatalf("%d lines kept", len(log))
	}
	want := fmt.Sprintf("line %d", 150+1+MaxErrors+5)
	if !strings.HasSuffix(log[0], want) || !strings.HasSuffix(log[len(log)-1], fmt.Sprintf("ERROR: error %d", MaxErrors+4)) {
		t.Errorf("first %q (want …%s), last %q", log[0], want, log[len(log)-1])
	}
	for _, l := range log {
		if len(l) > MaxLineBytes+64 {
			t.Errorf("line of %d bytes kept", len(l))
		}
	}
	st := j.Status()
	if len(st.Errors) != MaxErrors || st.ErrorCount != MaxErrors+5 {
		t.Errorf("errors kept %d, counted %d", len(st.Errors), st.ErrorCount)
	}
}

// The job's log (.jobs/*/log, read on terminals) escapes what its lines
// quote from stored data; the errors kept for the JSON status stay as
// they are.
func TestJobLogEscaped(t *testing.T) {
	j := newJob("id", "test", nil, nopWork{}, slog.New(slog.DiscardHandler))
	j.Logf("snapshot %s: verify state %s", "vm/1/2024-05-01T10:00:00Z", "ok\x1b[31m\r")
	j.Errorf("archive %s: bad", "a\nb\u009b")
	log := j.Log()
	if len(log) != 2 || !strings.HasSuffix(log[0], `verify state ok\x1b[31m\r`) || !strings.HasSuffix(log[1], `ERROR: archive a\nb\u009b: bad`) {
		t.Fatalf("log %q", log)
	}
	if st := j.Status(); len(st.Errors) != 1 || st.Errors[0] != "archive a\nb\u009b: bad" {
		t.Fatalf("errors %q", st.Errors)
	}
}
