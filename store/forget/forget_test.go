package forget_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/forget"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestForget: a dry run judges without removing; a protected snapshot
// is refused with the next step, the others removed; a group whose
// snapshots are all removable goes with them, one that keeps a
// protected snapshot stays.
func TestForget(t *testing.T) {
	s := storetest.NewStore(t)
	ctx := t.Context()
	g1, g2 := store.Group{Type: "vm", ID: "1"}, store.Group{Type: "vm", ID: "2"}
	img := storetest.Image{Data: storetest.RandBytes("forget", 1<<16)}
	a := storetest.BackupImage(t, s, g1, time.Unix(1.7e9, 0), img)
	b := storetest.BackupImage(t, s, g1, time.Unix(1.75e9, 0), img)
	c := storetest.BackupImage(t, s, g2, time.Unix(1.7e9, 0), img)
	if err := s.SetProtected(ctx, b, true); err != nil {
		t.Fatal(err)
	}

	dry := &forget.Report{DryRun: true}
	if err := forget.Group(ctx, s, g1, true, dry); err != nil {
		t.Fatal(err)
	}
	if dry.Removed != 1 || dry.Refused != 1 || dry.GroupState != "kept" || !strings.Contains(dry.NextStep, "unprotect") {
		t.Fatalf("dry run %+v", dry)
	}
	var out, errOut bytes.Buffer
	dry.WriteText(&out, &errOut)
	if !strings.Contains(out.String(), "would remove "+a.String()) || !strings.Contains(errOut.String(), "would keep group vm/1") ||
		!strings.Contains(errOut.String(), "refused "+b.String()+": it is protected") {
		t.Errorf("dry run text:\n%s\n%s", out.String(), errOut.String())
	}
	if _, err := s.Snapshots(g1); err != nil {
		t.Fatal(err)
	}

	rep := &forget.Report{}
	rep.Add(forget.One(ctx, s, a, false))
	rep.Add(forget.One(ctx, s, b, false))
	rep.Add(forget.One(ctx, s, store.Snapshot{Group: g1, Time: time.Unix(1.9e9, 0)}, false))
	if rep.Removed != 1 || rep.Refused != 2 || rep.Snapshots[1].State != forget.Protected || rep.Snapshots[2].State != forget.NotFound ||
		!rep.Snapshots[0].Finished {
		t.Fatalf("report %+v", rep)
	}

	grp := &forget.Report{}
	if err := forget.Group(ctx, s, g2, false, grp); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	grp.WriteText(&out, &errOut)
	if grp.GroupState != forget.Removed || grp.Removed != 1 || grp.Snapshots[0].Snapshot != c.String() ||
		!strings.Contains(out.String(), "removed group vm/2\n") || !strings.Contains(out.String(), "cairn gc") {
		t.Errorf("group %+v:\n%s", grp, out.String())
	}
}
