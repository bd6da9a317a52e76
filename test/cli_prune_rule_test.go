package test

import (
	"regexp"
	"testing"

	"github.com/cairnfs/cairn/test/e2e"
)

// prune says which keep option kept each snapshot, as PBS shows it.
func TestPruneShowsRule(t *testing.T) {
	t.Parallel() // a store of its own
	st := e2e.OwnStore(t, "cairn-e2e-")
	img, _ := e2e.SparseImage(t, 64<<10, 30)
	for _, at := range []string{"2026-01-01T10:00:00Z", "2026-01-02T10:00:00Z", "2026-01-02T11:00:00Z", "2026-01-03T10:00:00Z"} {
		e2e.MustCairn(t, "--store", st, "backup", "--type", "vm", "--id", "p", "--time", at, "disk.img:"+img)
	}
	r := e2e.MustCairn(t, "--store", st, "prune", "vm/p", "--keep-last", "1", "--keep-daily", "2", "--dry-run")
	for _, want := range []string{
		`vm/p/2026-01-03T10:00:00Z\s+keep\s+by keep-last`,
		`vm/p/2026-01-02T11:00:00Z\s+keep\s+by keep-daily`,
		`vm/p/2026-01-02T10:00:00Z\s+remove`,
		`vm/p/2026-01-01T10:00:00Z\s+keep\s+by keep-daily`,
	} {
		if !regexp.MustCompile(want).MatchString(r.Stdout) {
			t.Errorf("prune output lacks %s:\n%s", want, r.Stdout)
		}
	}
}
