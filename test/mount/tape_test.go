package test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/test/e2e"
)

// TestTape runs the tape scenarios through the binary; they restore into
// one new store (init makes 65,536 directories: seconds on this disk, so
// the store goes to a tmpfs when there is one).
func TestTape(t *testing.T) {
	e2e.SharedStore(t)
	dst := e2e.OwnStore(t, "cairn-e2e-tape-")
	t.Run("ExportRestore", func(t *testing.T) { testTapeExportRestore(t, dst) })
	t.Run("Cancel", func(t *testing.T) { testTapeExportCancel(t, dst) })
	t.Run("BadInput", func(t *testing.T) { testTapeBadInput(t, dst) })
	t.Run("Claims", func(t *testing.T) { testTapeClaims(t, dst) })
}

type tapeRestoreResult struct {
	State  string `json:"state"`
	Result struct {
		Chunks    int64                              `json:"chunks"`
		Present   int64                              `json:"chunks_present"`
		FilesRead []string                           `json:"files_read"`
		OK        int                                `json:"snapshots_ok"`
		Failed    int                                `json:"snapshots_failed"`
		Snapshots []struct{ Snapshot, State string } `json:"snapshots"`
	} `json:"result"`
}

// testTapeExportRestore exports snapshots that share chunks to a pool of
// small tapes, restores one and then all into a new store, verifies it
// and compares every archive; a second export writes only new chunks.
func testTapeExportRestore(t *testing.T, dst string) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("tape")
	a := e2e.RandBytes(4<<20, seed+21)
	b := append(slices.Clone(a[:2<<20]), e2e.RandBytes(2<<20, seed+22)...)
	c := append(slices.Clone(b[1<<20:3<<20]), e2e.RandBytes(1<<20, seed+23)...)
	snaps := []string{
		e2e.TapeBackup(t, st, ns, "1", "2024-03-01T10:00:00Z", a),
		e2e.TapeBackup(t, st, ns, "1", "2024-03-02T10:00:00Z", b),
		e2e.TapeBackup(t, st, ns, "2", "2024-03-01T10:00:00Z", c),
	}
	drive := t.TempDir()
	export := func() e2e.TapeExportResult {
		r := e2e.MustCairn(t, "--store", st, "tape", "export", "--drive", drive, "--pool", "small", "--tape-size", "4M",
			"--worker-threads", "2", "--ns", ns, "--json")
		var res e2e.TapeExportResult
		e2e.DecodeJSON(t, r, &res)
		return res
	}
	res := export()
	// a: 16 chunks, b: 8 new, c: 4 new
	if res.State != "ok" || res.Result.OK != 3 || res.Result.Chunks != 28 || len(res.Result.Tapes) < 3 {
		t.Fatalf("export: %+v", res)
	}

	// Selective restore of b into an empty store reads only the tape
	// files that hold b's chunks.
	r := e2e.MustCairn(t, "--store", dst, "tape", "restore", "--drive", drive, "--json", snaps[1])
	var rr tapeRestoreResult
	e2e.DecodeJSON(t, r, &rr)
	if rr.State != "ok" || rr.Result.OK != 1 || len(rr.Result.Snapshots) != 1 || rr.Result.Chunks != 16 {
		t.Fatalf("selective restore: %+v", rr)
	}
	// Chunks are on tape snapshot by snapshot (a's 16, b's 8 new, c's 4
	// new), in any order within a snapshot (two readers).
	cat := e2e.MustCairn(t, "tape", "catalog", "--drive", drive, "--json")
	ofAB, ofC, all := tapeFilesOf(t, cat.Stdout, 0, 24), tapeFilesOf(t, cat.Stdout, 24, 28), tapeFilesOf(t, cat.Stdout, 0, 28)
	for _, f := range rr.Result.FilesRead {
		if !slices.Contains(ofAB, f) {
			t.Errorf("selective restore read %s, which holds none of b's chunks", f)
		}
	}
	for _, f := range ofC {
		if !slices.Contains(ofAB, f) && slices.Contains(rr.Result.FilesRead, f) {
			t.Errorf("selective restore read %s, which holds only c's chunks", f)
		}
	}
	if len(rr.Result.FilesRead) == 0 || len(rr.Result.FilesRead) >= len(all) {
		t.Errorf("selective restore read %v of %v", rr.Result.FilesRead, all)
	}

	// Everything else.
	r = e2e.MustCairn(t, "--store", dst, "tape", "restore", "--drive", drive, "--pool", "small", "--json")
	e2e.DecodeJSON(t, r, &rr)
	if rr.State != "ok" || rr.Result.OK != 2 || rr.Result.Chunks != 12 {
		t.Fatalf("full restore: %+v", rr)
	}
	e2e.MustCairn(t, "--store", dst, "verify")
	for i, data := range [][]byte{a, b, c} {
		got := e2e.MustCairn(t, "--store", dst, "cat", snaps[i], "disk.img")
		if !bytes.Equal([]byte(got.Stdout), data) {
			t.Fatalf("%s: restored archive differs", snaps[i])
		}
	}

	// A new snapshot: the next export writes only its new chunks.
	d := append(slices.Clone(c[:2<<20]), e2e.RandBytes(512<<10, seed+24)...)
	snaps = append(snaps, e2e.TapeBackup(t, st, ns, "2", "2024-03-02T10:00:00Z", d))
	res = export()
	if res.State != "ok" || res.Result.OK != 1 || res.Result.Present != 3 || res.Result.Chunks != 2 {
		t.Fatalf("second export: %+v", res)
	}
	r = e2e.MustCairn(t, "--store", dst, "tape", "restore", "--drive", drive, "--json", snaps[3])
	e2e.DecodeJSON(t, r, &rr)
	if rr.Result.Chunks != 2 || rr.Result.Present != 8 {
		t.Fatalf("restore of the new snapshot: %+v", rr)
	}
	if got := e2e.MustCairn(t, "--store", dst, "cat", snaps[3], "disk.img"); !bytes.Equal([]byte(got.Stdout), d) {
		t.Fatal("restored new snapshot differs")
	}

	status := e2e.MustCairn(t, "tape", "status", "--drive", drive)
	if !strings.Contains(status.Stdout, "small-0001") || !strings.Contains(status.Stdout, "full") ||
		!strings.Contains(status.Stdout, "4 snapshots, 30 chunks") {
		t.Fatalf("status:\n%s", status.Stdout)
	}
}

// tapeFilesOf returns "TAPE:FILE" of the chunk archives that hold the
// chunks number from to to-1 of the media set, counted in tape order.
func tapeFilesOf(t *testing.T, catalogJSON string, from, to int) []string {
	t.Helper()
	var sets []struct {
		Tapes []struct {
			Label string
			Files []struct {
				File   int
				Kind   string
				Chunks int
			}
		}
	}
	if err := json.Unmarshal([]byte(catalogJSON), &sets); err != nil || len(sets) != 1 {
		t.Fatalf("catalog %q: %v", catalogJSON, err)
	}
	var out []string
	n := 0
	for _, tp := range sets[0].Tapes {
		for _, f := range tp.Files {
			if f.Kind != "chunk archive" {
				continue
			}
			if n < to && n+f.Chunks > from {
				out = append(out, tp.Label+":"+strconv.Itoa(f.File))
			}
			n += f.Chunks
		}
	}
	return out
}

// testTapeExportCancel interrupts an export (SIGINT) while it writes the
// second tape: the media set stays usable, a second export finishes it,
// and what it holds restores intact.
func testTapeExportCancel(t *testing.T, dst string) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("tapecancel")
	data := e2e.RandBytes(24<<20, seed+31)
	snap := e2e.TapeBackup(t, st, ns, "1", "2024-03-01T10:00:00Z", data)
	drive := t.TempDir()
	args := []string{"--store", st, "tape", "export", "--drive", drive, "--pool", "c", "--tape-size", "8M",
		"--ns", ns, "--json"}
	cmd := exec.Command(e2e.Binary(), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	second := filepath.Join(drive, "tapefile-2-c-0002.json") // the second tape has begun
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(second); err == nil || time.Now().After(deadline) {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 || !strings.Contains(errb.String(), "tape export cancelled") { // 130: after SIGINT
		t.Fatalf("interrupted export: %v\nstdout %s\nstderr %s", err, out.String(), errb.String())
	}
	var res e2e.TapeExportResult
	json.Unmarshal(out.Bytes(), &res)
	if res.State != "cancelled" || res.Result.OK != 0 || res.Result.Chunks == 0 || res.Result.Chunks >= 96 {
		t.Fatalf("interrupted export: %+v", res)
	}
	first := res.Result.Chunks

	// The set is readable and takes the rest.
	e2e.MustCairn(t, "tape", "catalog", "--drive", drive)
	r := e2e.MustCairn(t, args...)
	json.Unmarshal([]byte(r.Stdout), &res)
	if res.State != "ok" || res.Result.OK != 1 || res.Result.Chunks+first != 96 {
		t.Fatalf("export after the interrupted one: %+v (first wrote %d)", res, first)
	}
	r = e2e.MustCairn(t, "--store", dst, "tape", "restore", "--drive", drive, "--json", snap)
	var rr tapeRestoreResult
	e2e.DecodeJSON(t, r, &rr)
	if rr.Result.OK != 1 || rr.Result.Chunks != 96 {
		t.Fatalf("restore: %+v", rr)
	}
	if got := e2e.MustCairn(t, "--store", dst, "cat", snap, "disk.img"); !bytes.Equal([]byte(got.Stdout), data) {
		t.Fatal("restored archive differs")
	}
	// Reading the tapes gives the same catalog.
	before := e2e.MustCairn(t, "tape", "catalog", "--drive", drive, "--json").Stdout
	e2e.MustCairn(t, "tape", "rebuild-catalog", "--drive", drive)
	if after := e2e.MustCairn(t, "tape", "catalog", "--drive", drive, "--json").Stdout; after != before {
		t.Fatalf("rebuilt catalog differs:\n%s\n%s", before, after)
	}
}

// testTapeBadInput: a missing drive, a full pool, a foreign tape and a
// corrupt tape each give a clear error, and nothing half-restored shows.
func testTapeBadInput(t *testing.T, dst string) {
	st := e2e.SharedStore(t)
	ns, seed := e2e.UniqueNS("tapebad")
	e2e.TapeBackup(t, st, ns, "1", "2024-03-01T10:00:00Z", e2e.RandBytes(512<<10, seed+41))
	e2e.TapeBackup(t, st, ns, "2", "2024-03-01T10:00:00Z", e2e.RandBytes(3<<20, seed+42))
	missing := filepath.Join(t.TempDir(), "nodrive")
	for _, args := range [][]string{
		{"--store", st, "tape", "export", "--drive", missing, "--pool", "p", "--ns", ns},
		{"tape", "status", "--drive", missing},
		{"tape", "catalog", "--drive", missing},
		{"--store", st, "tape", "restore", "--drive", missing},
	} {
		r := e2e.Cairn(t, nil, args...)
		if r.Code != 1 || !strings.Contains(r.Stderr, "no such tape drive directory") {
			t.Errorf("%v: exit %d, %q", args, r.Code, r.Stderr)
		}
	}
	if r := e2e.Cairn(t, nil, "--store", st, "tape", "export", "--drive", t.TempDir(), "--pool", "p", "--worker-threads", "33"); r.Code != 2 {
		t.Errorf("33 worker threads: exit %d %q", r.Code, r.Stderr)
	}

	// A pool with one 2 MiB tape and no auto-create: the small snapshot
	// fits, the big one does not.
	drive := t.TempDir()
	e2e.MustCairn(t, "tape", "label", "--drive", drive, "--pool", "full", "--tape-size", "2M", "full-1")
	r := e2e.Cairn(t, nil, "--store", st, "tape", "export", "--drive", drive, "--pool", "full", "--no-auto-create", "--ns", ns, "--json")
	var res e2e.TapeExportResult
	e2e.DecodeJSON(t, r, &res)
	if r.Code == 0 || res.Result.OK != 1 || !strings.Contains(strings.Join(res.Errors, " "), "no writable tape") {
		t.Fatalf("full pool: exit %d %+v", r.Code, res)
	}
	if r := e2e.Cairn(t, nil, "tape", "erase", "--drive", drive, "full-1"); r.Code == 0 || !strings.Contains(r.Stderr, "belongs to media set") {
		t.Fatalf("erase of a media set member: exit %d %q", r.Code, r.Stderr)
	}

	// A foreign tape: refused by label, reported by rebuild-catalog.
	os.WriteFile(filepath.Join(drive, "tape-foreign.json"), []byte(`{"files": 1}`), 0o644)
	os.WriteFile(filepath.Join(drive, "tapefile-0-foreign.json"), e2e.RandBytes(256<<10, seed+43), 0o644)
	if r := e2e.Cairn(t, nil, "tape", "label", "--drive", drive, "foreign"); r.Code == 0 || !strings.Contains(r.Stderr, "not blank") {
		t.Errorf("label of a foreign tape: exit %d %q", r.Code, r.Stderr)
	}
	if r := e2e.Cairn(t, nil, "tape", "rebuild-catalog", "--drive", drive, "foreign"); r.Code == 0 || !strings.Contains(r.Stderr, "foreign tape block") {
		t.Errorf("rebuild of a foreign tape: exit %d %q", r.Code, r.Stderr)
	}

	// A corrupt chunk archive: the snapshot is not restored, and does not
	// appear in the store.
	path := filepath.Join(drive, "tapefile-2-full-1.json")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("garbage!"), 16+48+48+100) // inside the first chunk's blob
	f.Close()
	r = e2e.Cairn(t, nil, "--store", dst, "tape", "restore", "--drive", drive, "--json")
	var rr tapeRestoreResult
	e2e.DecodeJSON(t, r, &rr)
	if r.Code != 3 || rr.Result.Failed != 1 || rr.Result.OK != 0 {
		t.Fatalf("restore from a corrupt tape: exit %d %+v\n%s", r.Code, rr, r.Stderr)
	}
	if list := e2e.MustCairn(t, "--store", dst, "snapshots", "--ns", ns); strings.Contains(list.Stdout, "vm/1") {
		t.Fatalf("half-restored snapshot listed:\n%s", list.Stdout)
	}
	if r := e2e.Cairn(t, nil, "tape", "rebuild-catalog", "--drive", drive, "full-1"); r.Code == 0 || !strings.Contains(r.Stderr, "tape full-1 file 2") {
		t.Errorf("rebuild of a corrupt tape: exit %d %q", r.Code, r.Stderr)
	}
}
