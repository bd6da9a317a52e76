package restore

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// A sandbox is a directory holding the restore target and, beside it,
// "outside": a canary tree that hostile archives aim at.
type sandbox struct {
	root, outside, target string
}

func newSandbox(t *testing.T) sandbox {
	t.Helper()
	root := t.TempDir()
	sb := sandbox{root: root, outside: filepath.Join(root, "outside"), target: filepath.Join(root, "target")}
	for _, d := range []string{sb.outside, filepath.Join(sb.outside, "dir"), sb.target} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"victim": "secret", "dir/inner": "inner"} {
		if err := os.WriteFile(filepath.Join(sb.outside, name), []byte(data), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("victim", filepath.Join(sb.outside, "link")); err != nil {
		t.Fatal(err)
	}
	old := time.Unix(1_000_000_000, 0)
	filepath.Walk(sb.outside, func(p string, _ os.FileInfo, _ error) error {
		unix.Lutimes(p, []unix.Timeval{unix.NsecToTimeval(old.UnixNano()), unix.NsecToTimeval(old.UnixNano())})
		return nil
	})
	return sb
}

// plant fills the target with symbolic links pointing outside, under the
// names hostile archives use, for --overwrite restores.
func (sb sandbox) plant(t *testing.T) {
	t.Helper()
	for _, name := range []string{"a", "b", "d", "x", "dir", "real", "h", "n", "s"} {
		target := sb.outside
		switch name {
		case "real", "h", "n", "b":
			target = filepath.Join(sb.outside, "victim")
		case "dir", "x":
			target = "../outside/dir"
		}
		if err := os.Symlink(target, filepath.Join(sb.target, name)); err != nil {
			t.Fatal(err)
		}
	}
	// and a directory of the target holding links that point outside
	c := filepath.Join(sb.target, "c")
	os.Mkdir(c, 0o777)
	for name, target := range map[string]string{"a": sb.outside, "victim": filepath.Join(sb.outside, "victim"),
		"x": "../../outside/dir", "f": "../../outside/victim"} {
		if err := os.Symlink(target, filepath.Join(c, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// state describes everything in the sandbox outside the target: type,
// mode, owner, size, link count, mtime, content, link target.
func (sb sandbox) state(t *testing.T) string {
	t.Helper()
	var out []string
	err := filepath.Walk(sb.root, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == sb.target && fi.IsDir() {
			return filepath.SkipDir
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		line := fmt.Sprintf("%s mode=%o uid=%d gid=%d size=%d nlink=%d mtime=%d.%d", p, st.Mode, st.Uid, st.Gid,
			st.Size, st.Nlink, st.Mtim.Sec, st.Mtim.Nsec)
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" sha=%x", sha256.Sum256(b))
		case unix.S_IFLNK:
			l, _ := os.Readlink(p)
			line += " -> " + l
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// hostileStore is a store that takes crafted archives.
type hostileStore struct {
	s    *store.Store
	next time.Time
}

func newHostileStore(t *testing.T) *hostileStore {
	t.Helper()
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &hostileStore{s: s, next: time.Now().Add(-24 * time.Hour).Truncate(time.Second)}
}

// restore stores root as a snapshot and restores it into target. The
// archive may be refused as corrupt (err), or restored in part.
func (h *hostileStore) restore(t *testing.T, root *hostile.Node, target string, overwrite bool) (*TreeReport, error) {
	t.Helper()
	return h.restoreWith(t, root, target, TreeOptions{Threads: 2, Overwrite: overwrite})
}

// restoreWith is restore with the options given.
func (h *hostileStore) restoreWith(t *testing.T, root *hostile.Node, target string, opt TreeOptions) (*TreeReport, error) {
	t.Helper()
	ctx := context.Background()
	meta, payload := hostile.Encode(root)
	h.next = h.next.Add(time.Second)
	snap, err := hostile.Store(ctx, h.s, store.Group{Type: "host", ID: "hostile"}, h.next, "root.pxar", meta, payload)
	if err != nil {
		t.Fatal(err)
	}
	m, err := h.s.ReadManifest(snap)
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.NewCache(h.s, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	acc, closeArchive, err := filearchive.OpenName(ctx, h.s, snap, m, "root.pxar", c)
	if err != nil {
		return nil, err
	}
	defer closeArchive()
	return Tree(ctx, acc, acc.Root(), "", target, opt)
}

func requireRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a restore is attacked as root: run this test as root")
	}
}

// restoreIsolated restores root into a fresh sandbox and fails the test
// if anything outside the target changed.
func restoreIsolated(t *testing.T, h *hostileStore, root func(outside string) *hostile.Node, overwrite bool) (sandbox, *TreeReport, error) {
	t.Helper()
	sb := newSandbox(t)
	if overwrite {
		sb.plant(t)
	}
	before := sb.state(t)
	rep, err := h.restore(t, root(sb.outside), sb.target, overwrite)
	if err != nil && !errors.Is(err, ErrPartial) && !errors.Is(err, pxar.ErrCorrupt) {
		t.Fatalf("restore: unexpected error %v", err)
	}
	if after := sb.state(t); after != before {
		t.Fatalf("the restore changed the sandbox outside its target:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	return sb, rep, err
}

// TestTreeRestoreTricks restores each known hostile archive, into an
// empty target and with --overwrite into a target planted with symbolic
// links that point outside: nothing outside the target may change.
func TestTreeRestoreTricks(t *testing.T) {
	requireRoot(t)
	h := newHostileStore(t)
	for _, overwrite := range []bool{false, true} {
		for i, tr := range hostile.Tricks("/outside") {
			t.Run(fmt.Sprintf("%s/overwrite=%v", tr.Name, overwrite), func(t *testing.T) {
				root := func(outside string) *hostile.Node { return hostile.Tricks(outside)[i].Root }
				sb, rep, err := restoreIsolated(t, h, root, overwrite)
				t.Logf("err=%v failed=%+v", err, failedPaths(rep))
				if check := trickChecks[tr.Name]; check != nil {
					check(t, sb, overwrite, rep)
				}
			})
		}
	}
}

func failedPaths(rep *TreeReport) []PathError {
	if rep == nil {
		return nil
	}
	return rep.Failed
}

// TestTreeRestoreRandomHostile is the property: random hostile archives
// (many seeds), restored as root, never change anything outside their
// target, with or without --overwrite into planted symbolic links.
// CAIRN_HOSTILE_SEEDS=N runs N seeds instead of 300.
func TestTreeRestoreRandomHostile(t *testing.T) {
	requireRoot(t)
	seeds := 300
	if testing.Short() {
		seeds = 40
	}
	if n, err := strconv.Atoi(os.Getenv("CAIRN_HOSTILE_SEEDS")); err == nil && n > 0 {
		seeds = n // longer runs
	}
	h := newHostileStore(t)
	for seed := range seeds {
		overwrite := seed%2 == 1
		root := func(outside string) *hostile.Node { return hostile.Random(uint64(seed), outside) }
		func() {
			defer func() {
				if t.Failed() {
					t.Fatalf("seed %d overwrite=%v", seed, overwrite)
				}
			}()
			restoreIsolated(t, h, root, overwrite)
		}()
	}
}

// trickChecks check what some tricks restore, beyond the sandbox.
var trickChecks = map[string]func(t *testing.T, sb sandbox, overwrite bool, rep *TreeReport){
	"symlink then directory": wantDuplicate("a"),
	"plain tree": func(t *testing.T, sb sandbox, overwrite bool, rep *TreeReport) {
		if len(failedPaths(rep)) > 0 {
			t.Fatalf("failed: %+v", rep.Failed)
		}
		for _, f := range []string{"a/f", "b", "x/y", "real"} {
			wantFile(t, filepath.Join(sb.target, f), "new") // the planted symlinks were replaced
		}
	},
	"directory twice": wantDuplicate("a"),
	"hard link through a symlink": func(t *testing.T, sb sandbox, overwrite bool, rep *TreeReport) {
		wantFailed(t, rep, "/h")
		wantFile(t, filepath.Join(sb.target, "real"), "real content")
	},
	"hard link absolute":          func(t *testing.T, sb sandbox, _ bool, rep *TreeReport) { wantFailed(t, rep, "/h") },
	"hard link dot-dot":           func(t *testing.T, sb sandbox, _ bool, rep *TreeReport) { wantFailed(t, rep, "/h") },
	"hard link dot-dot inside":    func(t *testing.T, sb sandbox, _ bool, rep *TreeReport) { wantFailed(t, rep, "/h") },
	"symlink to a file then file": wantDuplicate("a"),
	"devices and fifos": func(t *testing.T, sb sandbox, _ bool, rep *TreeReport) {
		wantKind(t, filepath.Join(sb.target, "null"), unix.S_IFCHR)
		wantKind(t, filepath.Join(sb.target, "blk"), unix.S_IFBLK)
		wantKind(t, filepath.Join(sb.target, "fifo"), unix.S_IFIFO)
		wantKind(t, filepath.Join(sb.target, "sock"), unix.S_IFSOCK)
	},
}

// wantDuplicate: a directory that names an entry twice is refused by the
// decoder (pxar.ErrDuplicate) before anything of it is restored; the
// restore's own EEXIST rules are the second line, which the --overwrite
// runs into planted symbolic links exercise.
func wantDuplicate(name string) func(t *testing.T, sb sandbox, overwrite bool, rep *TreeReport) {
	return func(t *testing.T, sb sandbox, overwrite bool, rep *TreeReport) {
		t.Helper()
		for _, f := range failedPaths(rep) {
			if strings.Contains(f.Err, fmt.Sprintf("holds %q more than once", name)) {
				return
			}
		}
		t.Fatalf("no duplicate-name failure for %q: %+v", name, failedPaths(rep))
	}
}

func wantFile(t *testing.T, p, content string) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		t.Fatalf("%s: not a regular file (%v, mode %o)", p, err, st.Mode)
	}
	if b, _ := os.ReadFile(p); string(b) != content {
		t.Fatalf("%s holds %q, want %q", p, b, content)
	}
}

func wantKind(t *testing.T, p string, ifmt uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil || st.Mode&unix.S_IFMT != ifmt {
		t.Fatalf("%s: mode %o (%v), want type %o", p, st.Mode, err, ifmt)
	}
}

// wantFailed checks that the report names the target path ending in
// suffix as failed.
func wantFailed(t *testing.T, rep *TreeReport, suffix string) {
	t.Helper()
	for _, f := range failedPaths(rep) {
		if strings.HasSuffix(f.Path, "/target"+suffix) {
			return
		}
	}
	t.Fatalf("no failure reported for %s: %+v", suffix, failedPaths(rep))
}
