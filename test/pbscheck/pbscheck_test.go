package pbscheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/store/storetest"
	"github.com/cairnfs/cairn/test/e2e"
)

func TestMain(m *testing.M) {
	e2e.Build()
	code := e2e.Main(m)
	if tinyDir != "" {
		os.RemoveAll(tinyDir)
	}
	os.Exit(code)
}

// TestSipHash: the standard SipHash-2-4 vectors (key 00..0f), and
// pxar's item types, which are hash_filename of their names
// (examples/mk-format-hashes.rs): this checks the hash, the key and the
// constants at once, against nothing of cairn's.
func TestSipHash(t *testing.T) {
	var key [16]byte
	msg := make([]byte, 15)
	for i := range key {
		key[i] = byte(i)
	}
	for i := range msg {
		msg[i] = byte(i)
	}
	k0, k1 := binary.LittleEndian.Uint64(key[:]), binary.LittleEndian.Uint64(key[8:])
	for _, v := range []struct {
		n    int
		want uint64
	}{{0, 0x726fdb47dd0e0e31}, {1, 0x74f839c593dc67fd}, {15, 0xa129ca6149be45e5}} {
		if got := sipHash24(k0, k1, msg[:v.n]); got != v.want {
			t.Errorf("SipHash-2-4 of %d bytes: %#x, want %#x", v.n, got, v.want)
		}
	}
	for name, typ := range map[string]uint64{
		"__PROXMOX_FORMAT_VERSION__": typeFormatVersion, "__PROXMOX_FORMAT_ENTRY_V2__": typeEntry,
		"__PROXMOX_FORMAT_ENTRY__": typeEntryV1, "__PROXMOX_FORMAT_PRELUDE__": typePrelude,
		"__PROXMOX_FORMAT_FILENAME__": typeFilename, "__PROXMOX_FORMAT_SYMLINK__": typeSymlink,
		"__PROXMOX_FORMAT_DEVICE__": typeDevice, "__PROXMOX_FORMAT_XATTR__": typeXattr,
		"__PROXMOX_FORMAT_ACL_USER__": typeACLUser, "__PROXMOX_FORMAT_ACL_GROUP__": typeACLGroup,
		"__PROXMOX_FORMAT_ACL_GROUP_OBJ__": typeACLGroupObj, "__PROXMOX_FORMAT_ACL_DEFAULT__": typeACLDefault,
		"__PROXMOX_FORMAT_ACL_DEFAULT_USER__": typeACLDefaultUser, "__PROXMOX_FORMAT_ACL_DEFAULT_GROUP__": typeACLDefaultGroup,
		"__PROXMOX_FORMAT_FCAPS__": typeFcaps, "__PROXMOX_FORMAT_QUOTA_PROJID__": typeQuotaProjID,
		"__PROXMOX_FORMAT_HARDLINK__": typeHardlink, "__PROXMOX_FORMAT_PXAR_PAYLOAD__": typePayload,
		"__PROXMOX_FORMAT_PXAR_PAYLOAD_REF__": typePayloadRef, "__PROXMOX_FORMAT_GOODBYE__": typeGoodbye,
		"__PROXMOX_FORMAT_PXAR_GOODBYE_TAIL_MARKER__":  goodbyeTailMarker,
		"__PROXMOX_FORMAT_PXAR_PAYLOAD_START_MARKER__": payloadStartMarker,
		"__PROXMOX_FORMAT_PXAR_PAYLOAD_TAIL_MARKER__":  payloadTailMarker,
	} {
		if got := hashName([]byte(name)); got != typ {
			t.Errorf("hash_filename(%s) = %#x, want %#x (%s)", name, got, typ, typeName(typ))
		}
	}
}

// tiny is a small store made by the real binary: one snapshot of a
// tree with every kind of entry, then an incremental one.
type tiny struct {
	store, src string
	snaps      []string // snapshot directories, oldest first
}

var (
	tinyOnce  sync.Once
	tinyStore *tiny
	tinyDir   string
)

// makeTiny makes the tiny store once for the tests of this process
// (they only read it); the first test to ask fails if it cannot.
func makeTiny(t *testing.T) *tiny {
	t.Helper()
	tinyOnce.Do(func() {
		dir, err := os.MkdirTemp(storetest.FastTempDir(), "pbscheck-")
		must(t, err)
		tinyDir = dir
		tinyStore = newTiny(t, dir)
	})
	if tinyStore == nil {
		t.Fatal("the tiny store could not be made")
	}
	return tinyStore
}

func newTiny(t *testing.T, dir string) *tiny {
	t.Helper()
	tn := &tiny{store: filepath.Join(dir, "store"), src: filepath.Join(dir, "src")}
	e2e.MustCairn(t, "--store", tn.store, "init", "-q")
	files := map[string]string{
		"a/one":       "one\n",
		"a/b/two":     "two two\n",
		"a/b/c/three": strings.Repeat("three\n", 1000),
		"big":         string(e2e.RandBytes(3<<20, 7)),
		"mid":         string(e2e.RandBytes(300<<10, 8)),
		"z/empty":     "",
	}
	e2e.WriteTree(t, tn.src, files)
	must(t, os.Symlink("a/one", filepath.Join(tn.src, "link")))
	must(t, os.Link(filepath.Join(tn.src, "a/b/two"), filepath.Join(tn.src, "z/hard")))
	must(t, unix.Mkfifo(filepath.Join(tn.src, "a/fifo"), 0o640))
	must(t, os.Chmod(filepath.Join(tn.src, "mid"), 0o600))
	if err := unix.Setxattr(filepath.Join(tn.src, "a/one"), "user.pbscheck", []byte("v"), 0); err != nil {
		t.Logf("no user xattrs here: %v", err)
	}
	tn.backup(t, "2024-05-01T10:00:00Z")
	e2e.Write(t, filepath.Join(tn.src, "a/b/c/three"), strings.Repeat("three\n", 1001), 0o644)
	e2e.Write(t, filepath.Join(tn.src, "a/new"), "new\n", 0o644)
	tn.backup(t, "2024-05-01T11:00:00Z")
	return tn
}

func (tn *tiny) backup(t *testing.T, at string) {
	t.Helper()
	r := e2e.MustCairn(t, "--store", tn.store, "backup", "--type", "host", "--id", "tiny", "--time", at, "--no-sync", "--json", "root.pxar:"+tn.src)
	var s struct{ Snapshot string }
	e2e.DecodeJSON(t, r, &s)
	tn.snaps = append(tn.snaps, filepath.Join(tn.store, s.Snapshot))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestCheckTinyStore: both snapshots of a store the binary made pass,
// and what the checker decodes is the source tree.
func TestCheckTinyStore(t *testing.T) {
	tn := makeTiny(t)
	c := &Checker{Store: tn.store}
	final := false
	files := 0
	c.File = func(archive, path string, size uint64, r io.Reader) error {
		b, err := io.ReadAll(io.LimitReader(r, 100)) // File may read a part
		if err != nil || archive != "root.pxar" {
			t.Errorf("File(%s, %s): %v", archive, path, err)
		}
		if src, _ := os.ReadFile(filepath.Join(tn.src, path)); final && !bytes.HasPrefix(src, b) {
			t.Errorf("%s: content %q…, source %q…", path, b, src[:min(len(src), 100)])
		}
		files++
		return nil
	}
	for i, snap := range tn.snaps {
		final = i == len(tn.snaps)-1
		rep, err := c.Check(snap)
		if err != nil {
			t.Fatalf("snapshot %d: %v", i, err)
		}
		a := rep.Archives["root.pxar"]
		if a == nil || rep.Encrypted || rep.Indexes != 3 {
			t.Fatalf("snapshot %d: report %+v", i, rep)
		}
		t.Logf("snapshot %d: %d entries, %d payload refs, metadata %d, payload %d bytes (%d unreferenced), %d chunks (%d new)",
			i, len(a.Entries), a.PayloadRefs, a.MetadataSize, a.PayloadSize, a.Unreferenced, rep.Chunks, rep.NewChunks)
		compareTree(t, tn.src, a, final)
		if files != a.PayloadRefs {
			t.Errorf("snapshot %d: File called %d times for %d payload references", i, files, a.PayloadRefs)
		}
		files = 0
	}
}

// compareTree compares the decoded archive with the source: every
// entry there, with its type, mode and content (if final: the source
// is as it was backed up).
func compareTree(t *testing.T, src string, a *Archive, final bool) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range a.Entries {
		seen[e.Path] = true
		p := filepath.Join(src, e.Path)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Errorf("%s: in the archive, not in the source: %v", e.Path, err)
			continue
		}
		if e.Hardlink != "" {
			var tst unix.Stat_t
			if err := unix.Lstat(filepath.Join(src, e.Hardlink), &tst); err != nil || tst.Ino != st.Ino {
				t.Errorf("%s: hard link to %s, not the same inode in the source", e.Path, e.Hardlink)
			}
			continue
		}
		if uint64(st.Mode) != e.Mode && (final || e.Path != "") {
			t.Errorf("%s: mode %o, source %o", e.Path, e.Mode, st.Mode)
		}
		switch {
		case e.IsRegular() && final:
			b, err := os.ReadFile(p)
			must(t, err)
			if sha256.Sum256(b) != e.SHA256 || uint64(len(b)) != e.Size {
				t.Errorf("%s: %d bytes, SHA-256 %x; the source has %d bytes", e.Path, e.Size, e.SHA256, len(b))
			}
		case e.IsSymlink():
			if target, _ := os.Readlink(p); target != e.Symlink {
				t.Errorf("%s: symlink to %q, source to %q", e.Path, e.Symlink, target)
			}
		}
	}
	if final {
		filepath.Walk(src, func(p string, _ os.FileInfo, _ error) error {
			rel, _ := filepath.Rel(src, p)
			if rel == "." {
				rel = ""
			}
			if !seen[rel] {
				t.Errorf("%s: in the source, not in the archive", rel)
			}
			return nil
		})
	}
}

// streams reads a snapshot's split archive streams whole.
func streams(t *testing.T, store, snap string) (meta, payload []byte) {
	t.Helper()
	read := func(name string) []byte {
		x, err := ReadIndex(filepath.Join(snap, name))
		must(t, err)
		b, err := io.ReadAll(OpenStream(store, x))
		must(t, err)
		return b
	}
	return read("root.mpxar.didx"), read("root.ppxar.didx")
}

// payloadRefs finds the PAYLOAD_REF items of a metadata stream: the
// offsets of their contents (offset u64, size u64).
func payloadRefs(t *testing.T, meta []byte) []int {
	t.Helper()
	var pat [16]byte
	binary.LittleEndian.PutUint64(pat[:], typePayloadRef)
	binary.LittleEndian.PutUint64(pat[8:], 32)
	var out []int
	for i := 0; ; {
		j := bytes.Index(meta[i:], pat[:])
		if j < 0 {
			break
		}
		out = append(out, i+j+16)
		i += j + 16
	}
	if len(out) < 3 {
		t.Fatalf("%d PAYLOAD_REF items in the metadata stream", len(out))
	}
	return out
}

// TestHostileStreams: streams altered after the binary wrote them fail
// with errors that say what pxar's readers would meet.
func TestHostileStreams(t *testing.T) {
	tn := makeTiny(t)
	meta, payload := streams(t, tn.store, tn.snaps[1])
	if _, err := DecodeSplit(bytes.NewReader(meta), bytes.NewReader(payload), DecodeOptions{}); err != nil {
		t.Fatalf("unaltered streams: %v", err)
	}
	refs := payloadRefs(t, meta)
	le := binary.LittleEndian
	cases := []struct {
		name  string
		alter func(meta, payload []byte)
		want  string
	}{
		{"decreasing payload offset", func(meta, _ []byte) {
			// the third file's content is said to be where the first's is
			le.PutUint64(meta[refs[2]:], le.Uint64(meta[refs[0]:]))
		}, "smaller than already consumed payload"},
		{"payload offset repeated", func(meta, _ []byte) {
			copy(meta[refs[1]:refs[1]+16], meta[refs[0]:refs[0]+16])
		}, "smaller than already consumed payload"},
		{"wrong PAYLOAD header type", func(meta, payload []byte) {
			off := le.Uint64(meta[refs[1]:])
			le.PutUint64(payload[off:], typeGoodbye)
		}, "the payload stream has GOODBYE of full size"},
		{"wrong PAYLOAD header size", func(meta, payload []byte) {
			off := le.Uint64(meta[refs[1]:])
			le.PutUint64(payload[off+8:], le.Uint64(payload[off+8:])+1)
		}, "not PAYLOAD of size"},
		{"reference into a file's content", func(meta, _ []byte) {
			le.PutUint64(meta[refs[1]:], le.Uint64(meta[refs[1]:])+1)
		}, "not PAYLOAD of size"},
		{"reference beyond the stream", func(meta, payload []byte) {
			le.PutUint64(meta[refs[len(refs)-1]:], uint64(len(payload)+100))
		}, "payload stream ends"},
		{"no payload start marker", func(_, payload []byte) {
			payload[0] ^= 1
		}, "PAYLOAD_START_MARKER"},
		{"no payload tail marker", func(_, payload []byte) {
			payload[len(payload)-16] ^= 1
		}, "PAYLOAD_TAIL_MARKER"},
		{"goodbye hash", func(meta, _ []byte) {
			// the root's goodbye table ends the stream: its first item's hash
			n := le.Uint64(meta[len(meta)-8:])
			meta[len(meta)-int(n)+16] ^= 1
		}, "GOODBYE"},
		{"goodbye tail offset", func(meta, _ []byte) {
			le.PutUint64(meta[len(meta)-16:], le.Uint64(meta[len(meta)-16:])+8)
		}, "tail offset"},
		{"trailing metadata", func(meta, _ []byte) {}, "after the root directory's GOODBYE"},
		{"format version 1", func(meta, _ []byte) {
			le.PutUint64(meta[16:], 1)
		}, "format version 1, not 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, p := bytes.Clone(meta), bytes.Clone(payload)
			c.alter(m, p)
			if c.name == "trailing metadata" {
				m = append(m, make([]byte, 16)...)
			}
			_, err := DecodeSplit(bytes.NewReader(m), bytes.NewReader(p), DecodeOptions{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			t.Log(err)
		})
	}
}

// TestHostileStore: a bad index_csum, a manifest that disagrees with an
// index, a corrupt chunk and a missing one are each reported, naming
// the file.
func TestHostileStore(t *testing.T) {
	tn := makeTiny(t)
	orig := tn.snaps[0]
	rel, _ := filepath.Rel(tn.store, orig)
	// a copy of the snapshot's files and of the chunks it uses
	copyStore := func(t *testing.T) (store, snap string) {
		store = t.TempDir()
		snapCopy := filepath.Join(store, rel)
		must(t, os.MkdirAll(snapCopy, 0o755))
		ents, err := os.ReadDir(orig)
		must(t, err)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(orig, e.Name()))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(snapCopy, e.Name()), b, 0o644))
			if strings.HasSuffix(e.Name(), "idx") {
				x, err := ReadIndex(filepath.Join(orig, e.Name()))
				must(t, err)
				for _, c := range x.Chunks {
					from, to := chunkPath(tn.store, c.Digest), chunkPath(store, c.Digest)
					b, err := os.ReadFile(from)
					must(t, err)
					must(t, os.MkdirAll(filepath.Dir(to), 0o755))
					must(t, os.WriteFile(to, b, 0o644))
				}
			}
		}
		return store, snapCopy
	}
	firstChunk := func(t *testing.T, store, snap, index string) string {
		x, err := ReadIndex(filepath.Join(snap, index))
		must(t, err)
		return chunkPath(store, x.Chunks[0].Digest)
	}
	flip := func(t *testing.T, path string, off int) {
		b, err := os.ReadFile(path)
		must(t, err)
		if off < 0 {
			off += len(b)
		}
		b[off] ^= 0x40
		must(t, os.WriteFile(path, b, 0o644))
	}
	cases := []struct {
		name  string
		alter func(t *testing.T, store, snap string)
		want  string
	}{
		{"none", func(*testing.T, string, string) {}, ""},
		{"bad index_csum", func(t *testing.T, _, snap string) {
			flip(t, filepath.Join(snap, "root.ppxar.didx"), 40)
		}, "root.ppxar.didx: index_csum: stored"},
		{"entry changed", func(t *testing.T, _, snap string) {
			flip(t, filepath.Join(snap, "root.mpxar.didx"), -1)
		}, "root.mpxar.didx: index_csum: stored"},
		{"manifest size", func(t *testing.T, _, snap string) {
			rewriteManifest(t, snap, func(m map[string]any) {
				f := m["files"].([]any)[0].(map[string]any)
				f["size"] = f["size"].(float64) + 1
			})
		}, "the manifest says"},
		{"corrupt chunk", func(t *testing.T, store, snap string) {
			flip(t, firstChunk(t, store, snap, "root.ppxar.didx"), -1)
		}, "CRC-32 stored"},
		{"missing chunk", func(t *testing.T, store, snap string) {
			must(t, os.Remove(firstChunk(t, store, snap, "root.mpxar.didx")))
		}, "no such file"},
		{"manifest CRC", func(t *testing.T, _, snap string) {
			flip(t, filepath.Join(snap, ManifestName), -1)
		}, "index.json.blob: zstd DataBlob: CRC-32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store, snap := copyStore(t)
			c.alter(t, store, snap)
			_, err := CheckSnapshot(store, snap)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("unaltered copy: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("error %v, want one saying %q", err, c.want)
			}
			t.Log(err)
		})
	}
}

// rewriteManifest changes a snapshot's manifest and writes it back as
// a plain DataBlob (which PBS reads too).
func rewriteManifest(t *testing.T, snap string, change func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(snap, ManifestName))
	must(t, err)
	data, err := decodeBlob(b)
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(data, &m))
	change(m)
	data, err = json.Marshal(m)
	must(t, err)
	out := append(append(magicPlain[:], 0, 0, 0, 0), data...)
	binary.LittleEndian.PutUint32(out[8:], crc32.ChecksumIEEE(data))
	must(t, os.WriteFile(filepath.Join(snap, ManifestName), out, 0o644))
}
