package runlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHistoryBoundedAndKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.json")
	h, err := OpenHistory(path, 16)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 200 {
		if err := h.Add(Sample{Time: t0.Add(time.Duration(i) * time.Hour), Chunks: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	s := h.Samples()
	if len(s) > 16 || s[0].Chunks != 0 || s[len(s)-1].Chunks != 199 {
		t.Fatalf("%d samples, first %d, last %d: want ≤16 spanning 0..199", len(s), s[0].Chunks, s[len(s)-1].Chunks)
	}
	for i := 1; i < len(s); i++ {
		if !s[i].Time.After(s[i-1].Time) {
			t.Fatalf("samples out of order at %d", i)
		}
	}
	again, err := OpenHistory(path, 16)
	if err != nil || len(again.Samples()) != len(s) {
		t.Fatalf("reopened: %v, %d samples, want %d", err, len(again.Samples()), len(s))
	}
}

func TestJournalKeepsNewestPerJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.json")
	j, err := OpenJournal(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		start := t0.Add(time.Duration(i) * time.Minute)
		for _, job := range []string{"verify", "gc"} {
			r := Run{Job: job, Due: start, Start: start, Result: ResultRunning}
			if err := j.Record(r); err != nil {
				t.Fatal(err)
			}
			r.Result, r.End = ResultOK, start.Add(time.Second)
			if err := j.Record(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	j, err = OpenJournal(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	runs := j.Runs()
	if len(runs) != 6 {
		t.Fatalf("%d runs kept, want 3 per job", len(runs))
	}
	for _, r := range runs {
		if r.Result != ResultOK {
			t.Fatalf("run %+v: the running record was not replaced", r)
		}
	}
	if got := j.LastDue("gc"); !got.Equal(t0.Add(9 * time.Minute)) {
		t.Fatalf("LastDue(gc) = %v", got)
	}
}

func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"garbage": []byte("not json"),
		"object":  []byte(`{"a":1}`),
		"huge":    []byte("[" + strings.Repeat(" ", maxFileBytes) + "]"),
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenHistory(path, 10); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("history %s: %v, want an error naming the file", name, err)
		}
		if _, err := OpenJournal(path, 10); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("journal %s: %v, want an error naming the file", name, err)
		}
	}
}

func TestGroupStale(t *testing.T) {
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	g := Group{Type: "host", ID: "a", Newest: now.Add(-25 * time.Hour), MaxAge: 24 * time.Hour}
	if !g.Stale(now) || (Group{Type: "host", ID: "a", MaxAge: time.Hour}).Stale(now) == false {
		t.Fatal("a group older than its age, or without a snapshot, is stale")
	}
	g.Newest = now.Add(-time.Hour)
	if g.Stale(now) || (Group{Newest: now.Add(-1000 * time.Hour)}).Stale(now) {
		t.Fatal("a fresh group, or one not watched, is not stale")
	}
	if g.Name() != "host/a" || (Group{Namespace: "x/y", Type: "vm", ID: "1"}).Name() != "ns/x/y/vm/1" {
		t.Fatal("Name")
	}
}
