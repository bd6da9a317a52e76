package test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
	"github.com/cairnfs/cairn/test/e2e"
)

// describeOutside lists everything under dir (type, mode, owner, size,
// links, mtime, content, link target).
func describeOutside(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		var st unix.Stat_t
		unix.Lstat(p, &st)
		line := fmt.Sprintf("%s %o %d:%d size=%d nlink=%d mtime=%d", p, st.Mode, st.Uid, st.Gid, st.Size, st.Nlink, st.Mtim.Nano())
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			b, _ := os.ReadFile(p)
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		if l, err := os.Readlink(p); err == nil {
			line += " -> " + l
		}
		out = append(out, line)
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestRestoreHostileTree restores crafted archives (symbolic links and
// hard links aimed outside the target, names repeated) with the binary,
// as root, into an empty target and with --overwrite into one planted
// with symbolic links pointing outside: nothing outside changes, the
// refused paths are named and the exit code is 3 (or 1 for an archive
// refused as corrupt).
func TestRestoreHostileTree(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a restore is attacked as root: run as root")
	}
	st := e2e.SharedStore(t)
	sandbox := t.TempDir()
	outside := filepath.Join(sandbox, "outside")
	os.MkdirAll(filepath.Join(outside, "dir"), 0o755)
	os.WriteFile(filepath.Join(outside, "victim"), []byte("secret"), 0o600)
	tricks := map[string]bool{"symlink then directory": true, "hard link through a symlink": true,
		"symlink to a file then file": true, "hard link dot-dot": true, "relative symlink then directory": true}
	s, err := store.Open(st)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []string
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, tr := range hostile.Tricks(outside) {
		if !tricks[tr.Name] {
			continue
		}
		meta, payload := hostile.Encode(tr.Root)
		snap, err := hostile.Store(context.Background(), s, store.Group{Type: "host", ID: "hostile-e2e"},
			at.Add(time.Duration(i)*time.Second), "root.pxar", meta, payload)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, snap.String())
	}
	s.Close()
	before := describeOutside(t, outside)
	for i, snap := range snaps {
		for _, overwrite := range []bool{false, true} {
			target := filepath.Join(sandbox, fmt.Sprintf("target%d-%v", i, overwrite))
			os.Mkdir(target, 0o755)
			args := []string{"--store", st, "restore", snap, "root.pxar", target}
			if overwrite {
				for _, n := range []string{"a", "s", "h", "real"} {
					os.Symlink(outside, filepath.Join(target, n))
				}
				args = append(args, "--overwrite")
			}
			r := e2e.Cairn(t, nil, args...)
			// With --overwrite the archive's last entry of a name may
			// replace the earlier one: all is restored (exit 0).
			refused := r.Code == 3 && strings.Contains(r.Stderr, target) || r.Code == 1 && strings.Contains(r.Stderr, "corrupt")
			if !refused && !(overwrite && r.Code == 0) {
				t.Fatalf("%s overwrite=%v: exit %d\n%s", snap, overwrite, r.Code, r.Stderr)
			}
			if after := describeOutside(t, outside); after != before {
				t.Fatalf("%s overwrite=%v changed what is outside the target:\n%s\n%s", snap, overwrite, before, after)
			}
		}
	}
}
