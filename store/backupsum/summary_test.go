package backupsum

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
)

const mib = 1 << 20

func TestBackupSummaryRatios(t *testing.T) {
	snap := store.Snapshot{Group: store.Group{Type: "vm", ID: "1"}, Time: time.Unix(1e9, 0)}
	img := store.UploadTotals{Bytes: 10 * mib, ZeroBytes: mib, Chunks: 10, NewChunks: 4, NewBytes: 4 * mib, NewStored: 2 * mib}
	px := store.UploadTotals{Bytes: 2 * mib, Chunks: 2, NewChunks: 1, NewBytes: mib, NewStored: mib}
	sum := New(snap, img, px, []FileArchive{{ReadBytes: 3 * mib, ReusedBytes: 5 * mib, Bytes: 8 * mib}}, time.Second)
	if sum.Bytes != 12*mib || sum.ReadBytes != 13*mib || sum.NewBytes != 5*mib || sum.NewStored != 3*mib ||
		sum.DedupBytes != 7*mib || sum.ReusedBytes != 5*mib || sum.DedupRatio != 12.0/5 || sum.CompressRatio != 5.0/3 {
		t.Errorf("summary %+v", sum)
	}
	none := New(snap, store.UploadTotals{Bytes: mib, Chunks: 1}, store.UploadTotals{}, nil, time.Second)
	if none.DedupRatio != 0 || none.CompressRatio != 0 || ratio(none.DedupRatio) != "- (nothing new)" {
		t.Errorf("nothing new: %+v", none)
	}
	var out bytes.Buffer
	sum.WriteText(&out)
	for _, want := range []string{"read      13 MiB", "reused    5.0 MiB", "12 MiB in 12 chunks: 5.0 MiB new in 5, 7.0 MiB already stored (1.0 MiB zero)",
		"stored    3.0 MiB", "dedup     2.40x", "compress  1.67x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("summary text lacks %q:\n%s", want, out.String())
		}
	}
}
