package storetest_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/walk"
	"github.com/cairnfs/cairn/store/storetest"
)

// recorder is a testing.TB that keeps what CompareTree reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func archive(t *testing.T, root string) *pxar.Accessor {
	t.Helper()
	var b bytes.Buffer
	if _, err := walk.Walk(context.Background(), root, &b, nil, walk.Options{}); err != nil {
		t.Fatal(err)
	}
	a, err := pxar.NewAccessor(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCompareTreeFindsDifferences changes the source after archiving it,
// one class of difference at a time, and expects CompareTree to name it.
func TestCompareTreeFindsDifferences(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		change     func(root string) error
	}{
		{"content", "content differs", func(root string) error {
			f, err := os.OpenFile(root+"/d/file", os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("X"), 0)
			return err
		}},
		{"mode", "stat", func(root string) error { return os.Chmod(root+"/d/file", 0o600) }},
		{"mtime", "stat", func(root string) error {
			return os.Chtimes(root+"/d/file", time.Now(), time.Unix(1, 0))
		}},
		{"link target", "symlink", func(root string) error {
			os.Remove(root + "/link")
			return os.Symlink("elsewhere", root+"/link")
		}},
		{"missing in archive", `"d/new"`, func(root string) error { return os.WriteFile(root+"/d/new", nil, 0o644) }},
		{"more in archive", "archive holds 4 entries, source 3", func(root string) error { return os.Remove(root + "/d/file") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			write(t, root+"/d/file", "content")
			if err := os.Symlink("d/file", root+"/link"); err != nil {
				t.Fatal(err)
			}
			a := archive(t, root)
			r := &recorder{TB: t}
			storetest.CompareTree(r, a, root, storetest.TreeOptions{})
			if len(r.errs) != 0 {
				t.Fatalf("unchanged tree: %q", r.errs)
			}
			if err := tc.change(root); err != nil {
				t.Fatal(err)
			}
			r = &recorder{TB: t}
			storetest.CompareTree(r, a, root, storetest.TreeOptions{})
			if len(r.errs) == 0 || !strings.Contains(strings.Join(r.errs, "\n"), tc.want) {
				t.Fatalf("after %s: %q, want %q", tc.name, r.errs, tc.want)
			}
		})
	}
}

func TestRandReproducible(t *testing.T) {
	if !bytes.Equal(storetest.RandBytes("a", 100), storetest.RandBytes("a", 100)) ||
		bytes.Equal(storetest.RandBytes("a", 100), storetest.RandBytes("b", 100)) ||
		!bytes.Equal(storetest.RandSeeded(100, 1), storetest.RandSeeded(100, 1)) ||
		bytes.Equal(storetest.RandSeeded(100, 1), storetest.RandSeeded(100, 2)) {
		t.Fatal("random bytes are not reproducible per name and seed")
	}
}
