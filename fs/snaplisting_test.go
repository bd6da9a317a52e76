package fs

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// rootWithF is a split archive's streams: root 0750 (uid 1000, gid 100,
// mtime 1600000000) holding one file f, "hi\n".
func rootWithF(t *testing.T) (meta, payload []byte) {
	t.Helper()
	var m, p bytes.Buffer
	enc, err := pxar.NewEncoder(&m, &p, pxMeta(pxar.ModeIFDIR|0o750, 1600000000))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.AddFile("f", pxMeta(pxar.ModeIFREG|0o644, 1600000001), 3, bytes.NewReader([]byte("hi\n"))); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return m.Bytes(), p.Bytes()
}

// indexedStore is a store of one snapshot holding a split archive
// root.pxar (root 0750, uid 1000, gid 100, one file f) and a compressed
// blob, old enough for the snapshot index to keep its manifest.
func indexedStore(t *testing.T) (*store.Store, store.Snapshot, []byte) {
	t.Helper()
	meta, payload := rootWithF(t)
	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.StartBackup(context.Background(), store.Group{Type: "host", ID: "idx"}, time.Unix(1700000000, 0))
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	for name, data := range map[string][]byte{"root.mpxar.didx": meta, "root.ppxar.didx": payload} {
		if err := addDynamic(s, b, name, data); err != nil {
			t.Fatal(err)
		}
	}
	conf := bytes.Repeat([]byte("memory: 2048\n"), 100)
	blob, err := chunk.EncodeBlob(nil, conf, true)
	if err == nil {
		err = b.AddBlob("conf.blob", blob)
	}
	if err == nil {
		err = b.Finish()
	}
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // the index keeps settled manifests only (store.snapIndexSettle)
	return s, b.Snapshot(), conf
}

// opens watches a snapshot's directory in the store and counts the
// opens of its manifest and of its archives' files.
type opens struct {
	fd int
}

func watchOpens(t *testing.T, dir string) *opens {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_OPEN); err != nil {
		t.Fatal(err)
	}
	return &opens{fd: fd}
}

// take returns the names opened since the last call.
func (o *opens) take() []string {
	var names []string
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(o.fd, buf)
		if err != nil || n <= 0 {
			return names
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			l := int(binary.NativeEndian.Uint32(buf[off+12:])) // struct inotify_event's len
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+l]), "\x00")
			if name != "" {
				names = append(names, name)
			}
			off += unix.SizeofInotifyEvent + l
		}
	}
}

// listAndStat lists the snapshot through the mount and stats each
// entry, checking what the mount shows.
func listAndStat(t *testing.T, dir string, conf []byte) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil || len(es) != 2 || es[0].Name() != "conf.blob" || es[1].Name() != "root.pxar" {
		t.Fatalf("listing %v, %v", es, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(dir, "root.pxar"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode != syscall.S_IFDIR|0o750 || st.Uid != 1000 || st.Gid != 100 || st.Mtim.Sec != 1600000000 {
		t.Fatalf("root.pxar: mode %o uid %d gid %d mtime %d", st.Mode, st.Uid, st.Gid, st.Mtim.Sec)
	}
	if err := unix.Lstat(filepath.Join(dir, "conf.blob"), &st); err != nil || st.Size != int64(len(conf)) {
		t.Fatalf("conf.blob: size %d, want %d (%v)", st.Size, len(conf), err)
	}
}

// TestListingFromIndex: once a mount has listed a snapshot and opened
// its file archive, the next mount lists the snapshot and stats its
// archives without opening its manifest or any of its files (inotify on
// the snapshot's directory), with the same attributes; reading still
// goes through the manifest and gives the right bytes (a rewritten
// manifest: TestListingGroupUnchanged). Listing from the manifest, as
// before, opens it and the test fails.
func TestListingFromIndex(t *testing.T) {
	needFUSE(t)
	s, snap, conf := indexedStore(t)
	watch := watchOpens(t, s.SnapshotPath(snap))
	counted := mountCounting(t, s, watch)
	mountOnce := func(what string, check func(dir string)) []string {
		return counted(what, func(mnt string) { check(filepath.Join(mnt, snap.String())) })
	}
	first := mountOnce("first", func(dir string) { listAndStat(t, dir, conf) })
	if !slices.Contains(first, store.ManifestName) || !slices.Contains(first, "root.mpxar.didx") {
		t.Fatalf("first mount opened %v: want the manifest and the archive", first)
	}
	second := mountOnce("second", func(dir string) { listAndStat(t, dir, conf) })
	if len(second) != 0 {
		t.Fatalf("listing and stat-ing from the index opened %v", second)
	}
	read := mountOnce("read", func(dir string) {
		listAndStat(t, dir, conf)
		if got, err := os.ReadFile(filepath.Join(dir, "root.pxar", "f")); err != nil || string(got) != "hi\n" {
			t.Fatalf("f: %q, %v", got, err)
		}
		if got, err := os.ReadFile(filepath.Join(dir, "conf.blob")); err != nil || !bytes.Equal(got, conf) {
			t.Fatalf("conf.blob: %d bytes, %v", len(got), err)
		}
	})
	if !slices.Contains(read, store.ManifestName) || !slices.Contains(read, "root.ppxar.didx") || !slices.Contains(read, "conf.blob") {
		t.Fatalf("reading opened %v: want the manifest and the archives' files", read)
	}
}

// TestListingHostileIndex: a mount over an index whose listings are
// forged (another manifest's key, or names no writer makes) or which is
// garbage lists what the manifest says and reads the right bytes.
func TestListingHostileIndex(t *testing.T) {
	needFUSE(t)
	s, snap, conf := listedStore(t)
	ipath := filepath.Join(s.Root(), store.SnapIndexName)
	good, err := os.ReadFile(ipath)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(good, &f); err != nil {
		t.Fatal(err)
	}
	entry := f["entries"].(map[string]any)[snap.String()].(map[string]any)
	forge := func(edit func(e map[string]any)) []byte {
		e := map[string]any{}
		b, _ := json.Marshal(entry)
		_ = json.Unmarshal(b, &e)
		edit(e)
		out, _ := json.Marshal(map[string]any{"version": f["version"], "entries": map[string]any{snap.String(): e}})
		return out
	}
	evil := []any{map[string]any{"n": "evil.img", "k": 1, "z": 666}}
	cases := map[string][]byte{
		"other manifest": forge(func(e map[string]any) {
			e["f"].(map[string]any)["c"] = e["f"].(map[string]any)["c"].(float64) + 1
			e["l"] = map[string]any{"a": evil}
		}),
		"bad name": forge(func(e map[string]any) {
			e["l"] = map[string]any{"a": []any{map[string]any{"n": "../x", "k": 1, "z": 1}}}
		}),
		"garbage": []byte("\x00not an index"),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.WriteFile(ipath, data, 0o600); err != nil {
				t.Fatal(err)
			}
			_, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
			dir := filepath.Join(mnt, snap.String())
			listAndStat(t, dir, conf)
			if got, err := os.ReadFile(filepath.Join(dir, "root.pxar", "f")); err != nil || string(got) != "hi\n" {
				t.Fatalf("f: %q, %v", got, err)
			}
		})
	}
}
