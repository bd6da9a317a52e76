package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// indexRow is what a listing shows of one snapshot.
type indexRow struct {
	Finished, Protected bool
	Sum                 ManifestSummary
	Err                 string
}

// listIndexed lists every snapshot through the store's index (and saves
// it), returning the rows and how many came from the index.
func listIndexed(t *testing.T, s *Store, log *slog.Logger) (map[string]indexRow, int) {
	t.Helper()
	x := s.OpenSnapIndex(log)
	rows := listWith(t, s, x.Summary)
	x.Save(false)
	return rows, x.Hits
}

// listTruth lists every snapshot from its manifest.
func listTruth(t *testing.T, s *Store) map[string]indexRow {
	t.Helper()
	return listWith(t, s, func(si SnapshotInfo) (ManifestSummary, error) {
		m, err := s.ReadManifest(si.Snapshot)
		if err != nil {
			return ManifestSummary{}, err
		}
		sum, err := SummarizeManifest(m)
		s.decodedBlobSizes(si.Snapshot, m, &sum)
		return sum, err
	})
}

func listWith(t *testing.T, s *Store, sum func(SnapshotInfo) (ManifestSummary, error)) map[string]indexRow {
	t.Helper()
	rows := map[string]indexRow{}
	for si, err := range s.Walk(context.Background(), Selector{}) {
		if err != nil {
			t.Fatal(err)
		}
		r := indexRow{Finished: si.Finished, Protected: si.Protected}
		if si.Finished {
			var err error
			if r.Sum, err = sum(si); err != nil {
				r.Err = err.Error()
			}
		}
		rows[si.String()] = r
	}
	return rows
}

// sameAsTruth lists through the index and fails unless it shows what the
// manifests say.
func sameAsTruth(t *testing.T, s *Store, what string) int {
	t.Helper()
	got, hits := listIndexed(t, s, nil)
	want := listTruth(t, s)
	if !maps.EqualFunc(got, want, func(a, b indexRow) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("%s: listing through the index\n%v\nwant\n%v", what, got, want)
	}
	return hits
}

// settleNow lets the index cache manifests of any age for the test.
func settleNow(t *testing.T) {
	old := snapIndexSettle
	snapIndexSettle = 0
	t.Cleanup(func() { snapIndexSettle = old })
}

func setNotes(t *testing.T, s *Store, snap Snapshot, notes string) {
	t.Helper()
	err := s.UpdateManifest(context.Background(), snap, func(m *Manifest) error {
		raw, _ := json.Marshal(notes)
		m.Unprotected["notes"] = raw
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSnapIndexStale changes the store behind the index's back in every
// way a writer does, and the listing must follow each time.
func TestSnapIndexStale(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	ctx := context.Background()
	g := Group{Type: TypeVM, ID: "100"}
	path, _ := makeImage(t, t.TempDir(), 1)
	a, _ := backupImage(t, s, g, day(1), path)
	b, _ := backupImage(t, s, g, day(2), path)
	c, _ := backupImage(t, s, Group{Type: TypeHost, ID: "h"}, day(1), path)
	setNotes(t, s, c, "aaaa")
	sameAsTruth(t, s, "first listing")
	if hits := sameAsTruth(t, s, "second listing"); hits != 3 {
		t.Fatalf("second listing: %d of 3 from the index", hits)
	}
	mpath := func(snap Snapshot) string { return filepath.Join(s.SnapshotPath(snap), ManifestName) }

	steps := []struct {
		what string
		do   func()
	}{
		{"verify updates a manifest", func() {
			err := s.UpdateManifest(ctx, a, func(m *Manifest) error {
				m.SetVerifyState(VerifyState{State: "failed", UPID: "u"})
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}},
		{"notes change (temp + rename)", func() { setNotes(t, s, b, "new notes") }},
		{"protect", func() { mustOK(t, s.SetProtected(ctx, a, true)) }},
		{"unprotect", func() { mustOK(t, s.SetProtected(ctx, a, false)) }},
		{"PBS creates .protected", func() { mustOK(t, os.WriteFile(filepath.Join(s.SnapshotPath(b), ProtectedName), nil, 0o644)) }},
		{"PBS removes .protected", func() { mustOK(t, os.Remove(filepath.Join(s.SnapshotPath(b), ProtectedName))) }},
		{"new backup", func() { backupImage(t, s, g, day(3), path) }},
		{"prune", func() { mustOK(t, s.ForgetSnapshot(ctx, b)) }},
		{"manifest moved away (unfinished)", func() { mustOK(t, os.Rename(mpath(a), mpath(a)+".away")) }},
		{"manifest back", func() { mustOK(t, os.Rename(mpath(a)+".away", mpath(a))) }},
		{"manifest rewritten in place, same size", func() {
			// plain blobs of the same JSON but for the notes: same size
			js, err := chunk.DecodeBlob(nil, mustRead(t, mpath(c)), 0)
			mustOK(t, err)
			old := plainBlob(t, js)
			changed := plainBlob(t, bytes.Replace(js, []byte(`"aaaa"`), []byte(`"bbbb"`), 1))
			if len(old) != len(changed) || bytes.Equal(old, changed) {
				t.Fatal("no same-size change")
			}
			tmp := mpath(c) + ".tmp"
			mustOK(t, os.WriteFile(tmp, old, 0o644))
			mustOK(t, os.Rename(tmp, mpath(c)))
			sameAsTruth(t, s, "plain manifest") // the index now has this file
			time.Sleep(20 * time.Millisecond)   // a later clock tick for the ctime
			f, err := os.OpenFile(mpath(c), os.O_WRONLY|os.O_TRUNC, 0)
			mustOK(t, err)
			_, err = f.Write(changed)
			mustOK(t, err)
			mustOK(t, f.Close())
		}},
	}
	for _, st := range steps {
		st.do()
		sameAsTruth(t, s, st.what)
	}
	rows, _ := listIndexed(t, s, nil)
	if n := rows[c.String()].Sum.Notes; n != "bbbb" {
		t.Fatalf("notes after the in-place write: %q", n)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	mustOK(t, err)
	return b
}

func mustOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSnapIndexSettle: a manifest younger than snapIndexSettle is not
// cached (its ctime could be shared by a change in the same tick).
func TestSnapIndexSettle(t *testing.T) {
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 1)
	backupImage(t, s, Group{Type: TypeVM, ID: "1"}, day(1), path)
	x := s.OpenSnapIndex(nil)
	listWith(t, s, x.Summary)
	for k, e := range x.new {
		if e.Manifest.Ctime >= x.settled {
			t.Fatalf("%s cached with ctime %d, settled before %d", k, e.Manifest.Ctime, x.settled)
		}
	}
}

// TestSnapIndexHostile: index files that are broken or not ours are
// ignored with one log line naming the file, the listing is right, and
// the index is rebuilt.
func TestSnapIndexHostile(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	path, _ := makeImage(t, t.TempDir(), 1)
	for d := 1; d <= 3; d++ {
		backupImage(t, s, Group{Type: TypeVM, ID: "1"}, day(d), path)
	}
	ipath := filepath.Join(s.Root(), SnapIndexName)
	sameAsTruth(t, s, "build")
	good, err := os.ReadFile(ipath)
	mustOK(t, err)
	versionJSON := fmt.Sprintf(`"version":%d`, snapIndexVersion)
	if !bytes.Contains(good, []byte(versionJSON)) {
		t.Fatalf("index without %s: %.80s", versionJSON, good)
	}
	var huge bytes.Buffer
	huge.WriteString(`{"version":1,"entries":{`)
	for i := 0; i <= maxSnapIndexEntries; i++ {
		fmt.Fprintf(&huge, `"%d":{},`, i)
	}
	huge.WriteString(`"x":{}}}`)
	// a forged entry for each snapshot with a key that is not its manifest's
	var forged snapIndexFile
	mustOK(t, json.Unmarshal(good, &forged))
	for k, e := range forged.Entries {
		e.Manifest.Ctime++
		e.Summary = ManifestSummary{Archives: []string{"evil.img"}, Size: 1}
		forged.Entries[k] = e
	}
	forgedJSON, _ := json.Marshal(forged)

	cases := []struct {
		name string
		make func()
		log  bool // an ignored file logs
	}{
		{"truncated", func() { write(t, ipath, good[:len(good)/2], 0o600) }, true},
		{"garbage", func() { write(t, ipath, []byte("\x00\xffnot json"), 0o600) }, true},
		{"empty", func() { write(t, ipath, nil, 0o600) }, true},
		{"wrong version", func() { write(t, ipath, bytes.Replace(good, []byte(versionJSON), []byte(`"version":9`), 1), 0o600) }, false}, // another cairn's: rebuilt quietly
		{"too many entries", func() { write(t, ipath, huge.Bytes(), 0o600) }, true},
		{"unknown field", func() { write(t, ipath, []byte(`{"version":1,"more":[1,2]}`), 0o600) }, true},
		{"entries not an object", func() { write(t, ipath, []byte(`{"version":1,"entries":[]}`), 0o600) }, true},
		{"trailing object", func() { write(t, ipath, append(append([]byte{}, good...), good...), 0o600) }, false},
		{"writable by others", func() { write(t, ipath, good, 0o666) }, true},
		{"a symlink", func() {
			target := filepath.Join(t.TempDir(), "idx")
			write(t, target, good, 0o600)
			os.Remove(ipath)
			mustOK(t, os.Symlink(target, ipath))
		}, true},
		{"a directory", func() { os.Remove(ipath); mustOK(t, os.Mkdir(ipath, 0o700)) }, true},
		{"forged entries", func() { write(t, ipath, forgedJSON, 0o600) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.make()
			var logBuf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logBuf, nil))
			got, _ := listIndexed(t, s, log)
			if want := listTruth(t, s); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("listing %v\nwant %v", got, want)
			}
			lines := strings.Count(logBuf.String(), "\n")
			switch {
			case c.log && (lines != 1 || !strings.Contains(logBuf.String(), SnapIndexName)):
				t.Fatalf("log %q: want one line naming the file", logBuf.String())
			case !c.log && lines != 0:
				t.Fatalf("log %q", logBuf.String())
			}
			if fi, err := os.Lstat(ipath); err == nil && fi.IsDir() {
				os.Remove(ipath) // cannot be replaced: the listing was right without it
			}
			sameAsTruth(t, s, "after "+c.name)
			if hits := sameAsTruth(t, s, "rebuilt"); hits != 3 {
				t.Fatalf("rebuilt index: %d of 3 hits", hits)
			}
		})
	}
}

func write(t *testing.T, path string, data []byte, mode os.FileMode) {
	t.Helper()
	os.Remove(path)
	mustOK(t, os.WriteFile(path, data, mode))
	mustOK(t, os.Chmod(path, mode))
}

// TestSnapIndexConcurrent lists through the index while backups, prunes
// and protection changes run (-race); once they stop, the index listing
// shows what the manifests say.
func TestSnapIndexConcurrent(t *testing.T) {
	settleNow(t)
	s := testStore(t)
	ctx := context.Background()
	path, _ := makeImage(t, t.TempDir(), 1)
	g := Group{Type: TypeVM, ID: "1"}
	for d := 1; d <= 4; d++ {
		backupImage(t, s, g, day(d), path)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }); wg.Wait() }
	defer halt() // before settleNow's cleanup, also on t.Fatal
	lister := func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			x := s.OpenSnapIndex(slog.New(slog.DiscardHandler))
			for si, err := range s.Walk(ctx, Selector{}) {
				if err != nil {
					continue // a group or snapshot removed meanwhile
				}
				if si.Finished {
					if _, err := x.Summary(si); err != nil && !errors.Is(err, ErrNotFound) {
						t.Errorf("summary of %s: %v", si, err)
					}
				}
			}
			x.Save(false)
		}
	}
	for range 3 {
		wg.Add(1)
		go lister()
	}
	for d := 5; d <= 12; d++ {
		snap, _ := backupImage(t, s, g, day(d), path)
		mustOK(t, s.SetProtected(ctx, snap, d%2 == 0))
		setNotes(t, s, snap, fmt.Sprint("notes ", d))
		if d%3 == 0 {
			old := Snapshot{Group: g, Time: day(d - 4)}
			mustOK(t, s.SetProtected(ctx, old, false))
			mustOK(t, s.ForgetSnapshot(ctx, old))
		}
	}
	halt()
	sameAsTruth(t, s, "after the writers")
	if hits := sameAsTruth(t, s, "again"); hits == 0 {
		t.Fatal("no listing from the index")
	}
}
