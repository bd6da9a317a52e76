package tape

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// TestLabelRefusesBadNames: every class of bad name or size is refused
// with ErrBadParam before any tape is created or labelled.
func TestLabelRefusesBadNames(t *testing.T) {
	dir := t.TempDir()
	openDrive(t, dir).Close()
	ok := LabelOptions{TapeSize: MinTapeSize}
	for _, tc := range []struct {
		name   string
		labels []string
		o      LabelOptions
	}{
		{"empty label", []string{"t1", ""}, ok},
		{"slash", []string{"t1", "a/b"}, ok},
		{"dot-dot", []string{"t1", ".."}, ok},
		{"space", []string{"t1", "a b"}, ok},
		{"too long", []string{"t1", strings.Repeat("x", 65)}, ok},
		{"control byte", []string{"t1", "a\x00"}, ok},
		{"bad pool", []string{"t1"}, LabelOptions{Pool: "../p", TapeSize: MinTapeSize}},
		{"small tape", []string{"t1"}, LabelOptions{TapeSize: MinTapeSize - 1}},
		{"no size", []string{"t1"}, LabelOptions{}},
	} {
		done, err := Label(bg, dir, tc.labels, tc.o)
		if !errors.Is(err, jobs.ErrBadParam) || len(done) != 0 {
			t.Errorf("%s: labelled %v, err %v; want ErrBadParam", tc.name, done, err)
		}
	}
	if st, err := ReadDriveStatus(dir); err != nil || len(st.Tapes) != 0 {
		t.Fatalf("refused labels left tapes: %+v %v", st, err)
	}
}

// TestTapeAdmin labels, exports, lists, rebuilds and erases through the
// API the tape commands use.
func TestTapeAdmin(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	done, err := Label(bg, dir, []string{"t1", "t2"}, LabelOptions{Pool: "pool", TapeSize: 4 << 20})
	if err != nil || len(done) != 2 || done[1].Label != "t2" || done[1].UUID == "" || done[1].Pool != "pool" {
		t.Fatalf("label: %+v %v", done, err)
	}
	d := openDrive(t, dir)
	rep, err := Export(bg, d, f.src, []string{f.a, f.b}, exportOpts(1))
	d.Close()
	if err != nil || rep.Failed() != 0 {
		t.Fatalf("export: %+v %v", rep, err)
	}

	st, err := ReadDriveStatus(dir)
	if err != nil || len(st.Tapes) < 2 || len(st.MediaSets) != 1 || st.MediaSets[0].Snapshots != 2 ||
		st.MediaSets[0].Chunks != int(rep.Chunks) || st.MediaSets[0].UUID != rep.MediaSet {
		t.Fatalf("status: %+v %v", st, err)
	}
	sets, err := ReadCatalogs(dir, rep.MediaSet)
	if err != nil || len(sets) != 1 || len(sets[0].Snapshots) != 2 || sets[0].Snapshots[0].Snapshot != f.a {
		t.Fatalf("catalogs: %+v %v", sets, err)
	}
	if _, err := ReadCatalogs(dir, "not-a-uuid"); !errors.Is(err, jobs.ErrBadParam) {
		t.Errorf("bad media set: %v", err)
	}
	if _, err := ReadCatalogs(dir, "0c6ee6a4-8bb4-4a0b-a0c8-0b5e7d4c2f11"); !errors.Is(err, media.ErrUnknown) {
		t.Errorf("unknown media set: %v", err)
	}

	// Rebuilt from the tapes, the catalogs say the same.
	var rebuilt []RebuiltCatalog
	if err := RebuildCatalogs(bg, dir, nil, quiet, func(r RebuiltCatalog) { rebuilt = append(rebuilt, r) }); err != nil {
		t.Fatal(err)
	}
	chunks, snaps := 0, 0
	for _, r := range rebuilt {
		if r.Err != nil || r.MediaSet != rep.MediaSet {
			t.Fatalf("rebuild: %+v", r)
		}
		chunks, snaps = chunks+r.Chunks, snaps+r.Snapshots
	}
	if chunks != int(rep.Chunks) || snaps != 2 {
		t.Fatalf("rebuilt %d chunks, %d snapshots; exported %d, 2", chunks, snaps, rep.Chunks)
	}
	if again, err := ReadCatalogs(dir, ""); err != nil || len(again) != 1 || len(again[0].Snapshots) != 2 {
		t.Fatalf("catalogs after rebuild: %+v %v", again, err)
	}

	// A tape of a media set: not relabelled or erased without force.
	if _, err := Label(bg, dir, []string{"t1"}, LabelOptions{TapeSize: 4 << 20}); !errors.Is(err, media.ErrNotBlank) {
		t.Errorf("relabel without force: %v", err)
	}
	if done, err := Erase(bg, dir, []string{"t1"}, EraseOptions{}); !errors.Is(err, media.ErrNotBlank) || len(done) != 0 {
		t.Errorf("erase without force: %v %v", done, err)
	}
	done2, err := Erase(bg, dir, []string{"t1"}, EraseOptions{Force: true, Remove: true})
	if err != nil || len(done2) != 1 {
		t.Fatalf("erase: %v %v", done2, err)
	}
	st, _ = ReadDriveStatus(dir)
	for _, row := range st.Tapes {
		if row.Label == "t1" {
			t.Errorf("erased and removed tape still listed: %+v", row)
		}
	}
}

// TestRebuildCatalogsBadTapes: an empty drive is an error; a tape that
// does not exist or holds no tape format fails alone, the others go on.
func TestRebuildCatalogsBadTapes(t *testing.T) {
	dir := t.TempDir()
	openDrive(t, dir).Close()
	if err := RebuildCatalogs(bg, dir, nil, quiet, func(RebuiltCatalog) {}); err == nil || !strings.Contains(err.Error(), "no written tape") {
		t.Errorf("empty drive: %v", err)
	}
	if _, err := Label(bg, dir, []string{"good", "junk"}, LabelOptions{TapeSize: MinTapeSize}); err != nil {
		t.Fatal(err)
	}
	junk := findTapeFile(t, dir, "junk")
	if err := os.WriteFile(junk, []byte("not a tape"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []RebuiltCatalog
	if err := RebuildCatalogs(bg, dir, []string{"missing", "junk", "good"}, quiet, func(r RebuiltCatalog) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].Err == nil || got[1].Err == nil || got[2].Err != nil || got[2].Label != "good" {
		t.Fatalf("rebuild: %+v", got)
	}
	if missing := filepath.Join(dir, "nodrive"); RebuildCatalogs(bg, missing, nil, quiet, func(RebuiltCatalog) {}) == nil {
		t.Error("rebuild on a missing drive succeeded")
	} else if _, err := os.Stat(missing); err == nil {
		t.Error("rebuild created the missing drive directory")
	}
}

// findTapeFile returns the file of the drive holding the tape label.
func findTapeFile(t *testing.T, dir, label string) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.Contains(filepath.Base(p), label) {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no file for tape %s in %s", label, dir)
	}
	return found
}
