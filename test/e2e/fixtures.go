package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// CairnBounded runs the binary with a deadline of three minutes (a race
// build is slow, a hang is forever): it fails the test if the deadline
// passes. A find of a 4,100-deep crafted archive prints a path per level,
// each holding every level above it (output quadratic in the depth):
// 5-6 s alone under -race, and over a minute once on a CI machine
// running five test packages at once.
func CairnBounded(t *testing.T, args ...string) Result {
	t.Helper()
	return CairnBoundedEnv(t, nil, args...)
}

// CairnBoundedEnv is CairnBounded with env added to the environment.
func CairnBoundedEnv(t *testing.T, env []string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	if inProcess(env, args) {
		r := RunInProcess(ctx, env, nil, args...)
		if ctx.Err() != nil {
			t.Fatalf("cairn %s: no answer within three minutes", strings.Join(args, " "))
		}
		return r
	}
	cmd := exec.CommandContext(ctx, binPath, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("cairn %s: no answer within three minutes", strings.Join(args, " "))
	}
	r := Result{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

// DecodeJSON decodes a run's standard output into v, failing the test
// (with its standard error) if it is no JSON.
func DecodeJSON(t *testing.T, r Result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Stdout), v); err != nil {
		t.Fatalf("json %q: %v (stderr %s)", r.Stdout, err, r.Stderr)
	}
}

var nsCount atomic.Int64

// UniqueNS names a namespace of its own for each run of a test, with a
// seed for data of its own (the stores outlive one run under -count).
func UniqueNS(base string) (string, uint64) {
	n := nsCount.Add(1)
	return base + strconv.FormatInt(n, 10), uint64(n) << 16
}

// TapeBackup backs up data as disk.img of ns/NS/vm/ID at the given time
// (256 KiB chunks) and returns the snapshot name.
func TapeBackup(t *testing.T, st, ns, id, at string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "disk.raw")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := MustCairn(t, "--store", st, "backup", "--ns", ns, "--type", "vm", "--id", id, "--time", at,
		"--chunk-size", "256K", "--no-sync", "--json", "disk.img:"+path)
	var sum struct{ Snapshot string }
	DecodeJSON(t, r, &sum)
	if !strings.HasPrefix(sum.Snapshot, "ns/"+ns+"/vm/"+id+"/") {
		t.Fatalf("snapshot %q", sum.Snapshot)
	}
	return sum.Snapshot
}

// TapeExportResult is the part of `cairn tape export --json` the tests read.
type TapeExportResult struct {
	State  string   `json:"state"`
	Errors []string `json:"errors"`
	Result struct {
		MediaSet  string   `json:"media_set"`
		Tapes     []string `json:"tapes"`
		Chunks    int64    `json:"chunks"`
		OK        int      `json:"snapshots_ok"`
		Present   int      `json:"snapshots_present"`
		Failed    int      `json:"snapshots_failed"`
		Snapshots []struct {
			Snapshot, State string
			Chunks          int64
		} `json:"snapshots"`
	} `json:"result"`
}

// BackupsOf makes n snapshots of group host/ID an hour apart, oldest
// first, and returns their names.
func BackupsOf(t *testing.T, st, id string, n int) []string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "img")
	var names []string
	at := time.Now().Add(-time.Duration(n+1) * time.Hour).UTC().Truncate(time.Second)
	for i := range n {
		os.WriteFile(img, RandBytes(200000, uint64(100+i)), 0o644)
		tm := at.Add(time.Duration(i) * time.Hour)
		MustCairn(t, "--store", st, "backup", "--type", "host", "--id", id, "--no-sync", "--time", tm.Format(time.RFC3339), "d.img:"+img)
		names = append(names, "host/"+id+"/"+tm.Format("2006-01-02T15:04:05Z"))
	}
	return names
}

// JobStatus reads a mount's .jobs/KIND/status until it names a job
// other than the one with id before and that job has ended, decodes it
// into v and returns the job's id.
func JobStatus(t *testing.T, mnt, kind, before string, v any) string {
	t.Helper()
	path := filepath.Join(mnt, ".jobs", kind, "status")
	for range 3000 {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var st struct{ ID, State string }
		DecodeJSON(t, Result{Stdout: string(data)}, &st)
		if st.ID != before && (st.State == "ok" || st.State == "failed" || st.State == "cancelled") {
			DecodeJSON(t, Result{Stdout: string(data)}, v)
			return st.ID
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: the job did not end", path)
	return ""
}

// PxarSummary is the part of `cairn backup --json` about file archives.
type PxarSummary struct {
	Snapshot     string `json:"snapshot"`
	Errors       int64  `json:"errors"`
	Files        int64  `json:"files"`
	FileArchives []struct {
		Archive     string `json:"archive"`
		Mode        string `json:"mode"`
		Files       int64  `json:"files"`
		Dirs        int64  `json:"dirs"`
		Symlinks    int64  `json:"symlinks"`
		Hardlinks   int64  `json:"hardlinks"`
		Excluded    int64  `json:"excluded"`
		ReadFiles   int64  `json:"read_files"`
		ReusedFiles int64  `json:"reused_files"`
		Errors      int64  `json:"errors"`
	} `json:"file_archives"`
}

// ParsePxarSummary decodes a backup summary of one file archive.
func ParsePxarSummary(t *testing.T, out string) PxarSummary {
	t.Helper()
	var s PxarSummary
	if err := json.Unmarshal([]byte(out), &s); err != nil || len(s.FileArchives) != 1 {
		t.Fatalf("summary %q: %v", out, err)
	}
	return s
}

// TreeListing describes a tree entry by entry: type, mode, owner, size,
// mtime, content digest, symlink target, xattrs, and hard-link groups.
func TreeListing(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	first := map[uint64]string{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		l := fmt.Sprintf("%q %o %d:%d", rel, st.Mode, st.Uid, st.Gid)
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			l += fmt.Sprintf(" mtime=%d.%09d", st.Mtim.Sec, st.Mtim.Nsec)
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			io.Copy(h, f)
			f.Close()
			l += fmt.Sprintf(" %d %x", st.Size, h.Sum(nil)[:8])
			if st.Nlink > 1 {
				if f, ok := first[st.Ino]; ok {
					l += " =" + f
				} else {
					first[st.Ino] = rel
				}
			}
		case unix.S_IFLNK:
			target, _ := os.Readlink(p)
			l += " -> " + target
		case unix.S_IFCHR, unix.S_IFBLK:
			l += fmt.Sprintf(" rdev=%d", st.Rdev)
		}
		buf := make([]byte, 4096)
		if n, err := unix.Llistxattr(p, buf); err == nil && n > 0 {
			names := strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00")
			sort.Strings(names)
			for _, name := range names {
				v := make([]byte, 4096)
				m, _ := unix.Lgetxattr(p, name, v)
				l += fmt.Sprintf(" %s=%x", name, v[:max(m, 0)])
			}
		}
		lines = append(lines, l)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
