package restore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/hostile"
)

// A restore of shared directories, with and without include patterns
// (which walk the tree first to find the directories on the way), ends at
// once: each directory is restored where it is stored, and each
// directory whose goodbye table lists more (the shared ones, stored
// inside another) is reported when its listing ends: its entries are not
// those of its table. The directories on the way to an included path
// are listed whole, so the same ones are reported with include patterns.
func TestTreeSharedDirs(t *testing.T) {
	const n = 40
	h := newHostileStore(t)
	for _, include := range [][]string{nil, {"leaf"}} {
		t.Run(fmt.Sprint("include=", include), func(t *testing.T) {
			f, err := NewFilter(include, nil)
			if err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(t.TempDir(), "t")
			var rep *TreeReport
			hostile.InTime(t, "restore shared directories", func() {
				rep, err = h.restoreWith(t, hostile.SharedDirs(n), target, TreeOptions{Threads: 2, Filter: f})
			})
			want := filepath.Join(target, "d00/d01/d02/d03/d04/d05/d06/d07/d08/d09/d10/d11/d12/d13/d14/d15/d16/d17/d18/d19/d20/d21/d22/d23/d24/d25/d26/d27/d28/d29/d30/d31/d32/d33/d34/d35/d36/d37/d38/d39/leaf")
			if _, serr := os.Lstat(want); rep == nil || rep.Dirs > n+1 || serr != nil {
				t.Fatalf("%v: report %+v, leaf: %v", err, rep, serr)
			}
			if err == nil || len(rep.Failed) != n-2 || !strings.Contains(rep.Failed[0].Err, "its goodbye table lists") {
				t.Fatalf("%v: %d dirs, %d failed, first %v", err, rep.Dirs, len(rep.Failed), rep.Failed[0])
			}
		})
	}
}
