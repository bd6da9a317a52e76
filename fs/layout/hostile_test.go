package layout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/hostile"
)

// TestHostileNames: names in the store that are no namespace, group or
// snapshot (bad characters, dot names, times that are none, a file where
// a snapshot's directory would be) are not listed, and do not fail the
// listings of the good ones beside them.
func TestHostileNames(t *testing.T) {
	s := newStore(t)
	g := store.Group{Type: store.TypeHost, ID: "good"}
	snap := backup(t, s, g, at(0), false)
	for _, p := range []string{"ns/..x", "ns/bad name", "ns/a\nb", "host/.hidden", "host/bad name", "host/a\x01b",
		"host/good/not-a-time", "host/good/2023-13-45T99:99:99Z", "host/good/.." + snap.TimeString(), "host/good/" + snap.TimeString() + "x"} {
		if err := os.MkdirAll(filepath.Join(s.Root(), p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.Root(), "host/good", at(60).Format("2006-01-02T15:04:05Z")), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l := &Layout{Store: s}
	root := l.NSDir("")
	wantNames(t, "the root", load(t, root, nil), "host")
	host := child(t, root, "host")
	wantNames(t, "host", load(t, host, nil), "good")
	wantNames(t, "the group", load(t, child(t, host, "good"), nil), snap.TimeString(), Latest)
}

// TestHostileSnapshots: a snapshot whose manifest is a FIFO fails its
// listing (the group's still lists it) and one whose blob is a FIFO is
// listed with the manifest's size, both in bounded time; the snapshots
// of hostile indexes (hostile.IndexCases, FIFOs among them) are listed
// from their manifests without opening an index.
func TestHostileSnapshots(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	manifest, blob, err := hostile.WriteFIFOs(ctx, s, store.Group{Type: store.TypeCT, ID: "fifo-manifest"},
		store.Group{Type: store.TypeCT, ID: "fifo-blob"}, at(0))
	if err != nil {
		t.Fatal(err)
	}
	c, err := hostile.PutChunks(s, "layout hostile", 8, hostile.ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	for _, ic := range hostile.IndexCases() {
		snap, err := hostile.WriteIndexCase(ctx, s, store.Group{Type: store.TypeVM, ID: ic.Name}, at(0), ic, c)
		if err != nil {
			t.Fatalf("%s: %v", ic.Name, err)
		}
		hostile.InTime(t, "listing "+ic.Name, func() {
			es := load(t, (&Layout{Store: s}).SnapshotDir(snap, store.ManifestStamp{}), nil)
			want := strings.TrimSuffix(strings.TrimSuffix(ic.File, ".fidx"), ".didx")
			if len(es) != 1 || es[0].Name != want || es[0].Kind != KindFile {
				t.Errorf("%s: listed %+v, want %s", ic.Name, es, want)
			}
		})
	}

	l := &Layout{Store: s}
	hostile.InTime(t, "listing a snapshot whose manifest is a FIFO", func() {
		if es := load(t, l.GroupDir(manifest.Group), nil); len(es) != 2 {
			t.Errorf("its group lists %q", names(es))
		}
		if _, _, err := l.SnapshotDir(manifest, store.ManifestStamp{}).Load(ctx); err == nil {
			t.Error("a snapshot whose manifest is a FIFO listed")
		}
	})
	hostile.InTime(t, "listing a snapshot whose blob is a FIFO", func() {
		es := load(t, l.SnapshotDir(blob, store.ManifestStamp{}), nil)
		if len(es) != 1 || es[0].Name != hostile.BlobFile || es[0].Size != 0 {
			t.Errorf("listed %+v", es)
		}
	})
}
