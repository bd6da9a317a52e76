package test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairnfs/cairn/test/e2e"
	"github.com/cairnfs/cairn/test/pbscheck"
)

// Incremental file backups (issue 27) checked by an independent reader:
// a tree changed a little in each of many rounds, backed up after each
// (metadata change detection: unchanged files' payload reused from the
// previous snapshot, chunks injected into the new payload index), every
// snapshot restored and compared with the source, and read by
// test/pbscheck as PBS's sequential pxar decoder reads it: payload
// references forward only, PAYLOAD headers where they point, contents
// equal to the source's.

// incrTree is the source tree of an incremental run and its random
// changes, deterministic for its seed.
type incrTree struct {
	root string
	rng  *rand.Rand
	when time.Time // mtimes set by touches, increasing
}

// Layout: 10 dirs × 3 subdirs × 10 small text files (300), four
// random files of 16-224 KiB (the rounds' chunks of 64 KiB on average,
// incrChunkSize, hold several files, and a file spans chunks: round 0
// checks both), a symlink, a hard link, an empty file, a FIFO, a device
// node, an xattr, a few modes. The tree and its chunks are 1/16 of the
// default's (random files of 0.25-3.5 MiB in chunks of 4 MiB): the same
// layout, and 1/16 of the bytes to back up, restore and decode in each
// round.
func newIncrTree(t *testing.T, root string, seed uint64) *incrTree {
	t.Helper()
	tr := &incrTree{root: root, rng: rand.New(rand.NewPCG(seed, 27)), when: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	for d := range 10 {
		for s := range 3 {
			for f := range 10 {
				rel := fmt.Sprintf("d%02d/s%d/f%03d.txt", d, s, f)
				var b strings.Builder
				for l := range 10 + tr.rng.IntN(60) {
					fmt.Fprintf(&b, "%s line %d %x\n", rel, l, tr.rng.Uint64())
				}
				e2e.Write(t, filepath.Join(root, rel), b.String(), 0o644)
			}
		}
	}
	for i, size := range []int{16 << 10, 64 << 10, 96 << 10, 224 << 10} {
		e2e.Write(t, filepath.Join(root, fmt.Sprintf("blobs/big%d.bin", i)), string(e2e.RandBytes(size, seed+uint64(i))), 0o644)
	}
	e2e.Write(t, filepath.Join(root, "links/empty"), "", 0o644)
	e2e.Write(t, filepath.Join(root, "links/target.txt"), "hard-linked\n", 0o644)
	incrOK(t, os.Link(filepath.Join(root, "links/target.txt"), filepath.Join(root, "links/hard")))
	incrOK(t, os.Symlink("../d01/s2/f003.txt", filepath.Join(root, "links/sym")))
	incrOK(t, unix.Mkfifo(filepath.Join(root, "links/fifo"), 0o640))
	if err := unix.Mknod(filepath.Join(root, "links/null"), unix.S_IFCHR|0o644, int(unix.Mkdev(1, 3))); err != nil {
		t.Logf("no device node in the tree: %v", err)
	}
	if err := unix.Setxattr(filepath.Join(root, "d00/s0/f000.txt"), "user.incr", []byte("initial"), 0); err != nil {
		t.Logf("no user xattrs in the tree: %v", err)
	}
	incrOK(t, os.Chmod(filepath.Join(root, "d02/s0/f001.txt"), 0o600))
	incrOK(t, os.Chmod(filepath.Join(root, "d03/s1/f004.txt"), 0o755))
	return tr
}

// regular lists the regular files (relative, sorted) outside links/,
// which keeps its hard link, symlink and empty file for every round.
func (tr *incrTree) regular(t *testing.T) []string {
	var out []string
	for _, f := range e2e.Files(t, tr.root) {
		if !strings.HasPrefix(f, "links/") {
			out = append(out, f)
		}
	}
	return out
}

// change makes round r's changes and says what they were: one-line
// appends to ~3% of the files (a different choice each round); every
// few rounds a directory renamed, files added and removed, a file
// touched without a change of content, a mode changed, an xattr set,
// a large file or the hard-linked one appended to.
func (tr *incrTree) change(t *testing.T, r int) string {
	t.Helper()
	var did []string
	regular := tr.regular(t)
	n := max(1, len(regular)*3/100)
	for _, i := range tr.rng.Perm(len(regular))[:n] {
		tr.appendLine(t, regular[i], r)
	}
	did = append(did, fmt.Sprintf("%d appends", n))
	if r%5 == 0 {
		dirs, _ := filepath.Glob(filepath.Join(tr.root, "d*", "s*"))
		sort.Strings(dirs)
		from := dirs[tr.rng.IntN(len(dirs))]
		to := fmt.Sprintf("%s-r%02d", from, r)
		incrOK(t, os.Rename(from, to))
		did = append(did, "renamed "+rel(tr.root, from)+" -> "+filepath.Base(to))
	}
	if r%3 == 0 {
		for i := range 3 {
			dirs, _ := filepath.Glob(filepath.Join(tr.root, "d*", "s*"))
			sort.Strings(dirs)
			p := filepath.Join(dirs[tr.rng.IntN(len(dirs))], fmt.Sprintf("new-r%02d-%d.txt", r, i))
			e2e.Write(t, p, strings.Repeat(fmt.Sprintf("new in round %d\n", r), 1+tr.rng.IntN(200)), 0o644)
		}
		small := slices.DeleteFunc(tr.regular(t), func(f string) bool { return strings.HasPrefix(f, "blobs/") })
		for _, i := range tr.rng.Perm(len(small))[:2] {
			incrOK(t, os.Remove(filepath.Join(tr.root, small[i])))
		}
		did = append(did, "3 added, 2 removed")
	}
	if r%4 == 0 {
		f := regular[tr.rng.IntN(len(regular))]
		tr.when = tr.when.Add(time.Hour)
		incrOK(t, os.Chtimes(filepath.Join(tr.root, f), tr.when, tr.when))
		did = append(did, "touched "+f)
	}
	if r%6 == 0 {
		f := regular[tr.rng.IntN(len(regular))]
		st, err := os.Stat(filepath.Join(tr.root, f))
		incrOK(t, err)
		incrOK(t, os.Chmod(filepath.Join(tr.root, f), st.Mode().Perm()^0o070))
		did = append(did, "chmod "+f)
	}
	if r%8 == 0 {
		f := regular[tr.rng.IntN(len(regular))]
		if err := unix.Setxattr(filepath.Join(tr.root, f), "user.incr", fmt.Appendf(nil, "round %d", r), 0); err == nil {
			did = append(did, "xattr on "+f)
		}
	}
	if r%7 == 0 {
		f := fmt.Sprintf("blobs/big%d.bin", tr.rng.IntN(4))
		tr.appendLine(t, f, r)
		tr.appendLine(t, "links/target.txt", r)
		did = append(did, "appended to "+f+" and the hard-linked file")
	}
	return strings.Join(did, ", ")
}

func (tr *incrTree) appendLine(t *testing.T, f string, r int) {
	t.Helper()
	h, err := os.OpenFile(filepath.Join(tr.root, f), os.O_WRONLY|os.O_APPEND, 0)
	incrOK(t, err)
	_, err = fmt.Fprintf(h, "round %d appended a line to %s\n", r, f)
	incrOK(t, err)
	incrOK(t, h.Close())
}

func rel(root, p string) string {
	r, _ := filepath.Rel(root, p)
	return r
}

// treeEntry is what a tree holds at a path.
type treeEntry struct {
	st     unix.Stat_t
	sha    [32]byte
	target string
	xattrs string // name=value, sorted
}

// xattrList is a file's xattrs as name=value lines, sorted.
func xattrList(t *testing.T, p string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Llistxattr(p, buf)
	if err != nil || n == 0 {
		return ""
	}
	var out []string
	for _, name := range strings.Split(strings.TrimRight(string(buf[:n]), "\x00"), "\x00") {
		v := make([]byte, 4096)
		m, err := unix.Lgetxattr(p, name, v)
		incrOK(t, err)
		out = append(out, name+"="+string(v[:m]))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// scanTree reads a tree: every entry by its path from the root ("" is
// the root), with its stat, content digest or link target.
func scanTree(t *testing.T, root string) map[string]*treeEntry {
	t.Helper()
	out := map[string]*treeEntry{}
	err := filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r := rel(root, p)
		if r == "." {
			r = ""
		}
		e := &treeEntry{}
		if err := unix.Lstat(p, &e.st); err != nil {
			return err
		}
		switch e.st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.sha = sha256.Sum256(b)
		case unix.S_IFLNK:
			if e.target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		e.xattrs = xattrList(t, p)
		out[r] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compareRestored compares a restored tree with its source: the same
// paths, types, modes, owners, mtimes (but of directories), contents,
// symlink targets and hard-link groups.
func compareRestored(t *testing.T, round string, src, dst string, want map[string]*treeEntry) {
	t.Helper()
	got := scanTree(t, dst)
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s: %s: in the source, not restored", round, p)
			continue
		}
		if g.st.Mode != w.st.Mode || g.st.Uid != w.st.Uid || g.st.Gid != w.st.Gid {
			t.Errorf("%s: %s: restored mode %o owner %d:%d, source %o %d:%d", round, p, g.st.Mode, g.st.Uid, g.st.Gid, w.st.Mode, w.st.Uid, w.st.Gid)
		}
		if w.st.Mode&unix.S_IFMT != unix.S_IFDIR && g.st.Mtim != w.st.Mtim {
			t.Errorf("%s: %s: restored mtime %v, source %v", round, p, g.st.Mtim, w.st.Mtim)
		}
		if g.sha != w.sha || g.st.Size != w.st.Size {
			a, _ := os.ReadFile(filepath.Join(src, p))
			b, _ := os.ReadFile(filepath.Join(dst, p))
			i := 0
			for i < min(len(a), len(b)) && a[i] == b[i] {
				i++
			}
			t.Errorf("%s: %s: restored %d bytes, source %d; first difference at byte %d", round, p, len(b), len(a), i)
		}
		if g.target != w.target {
			t.Errorf("%s: %s: restored symlink to %q, source to %q", round, p, g.target, w.target)
		}
		if g.st.Rdev != w.st.Rdev {
			t.Errorf("%s: %s: restored device %#x, source %#x", round, p, g.st.Rdev, w.st.Rdev)
		}
		if g.xattrs != w.xattrs {
			t.Errorf("%s: %s: restored xattrs %q, source %q", round, p, g.xattrs, w.xattrs)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: %s: restored, not in the source", round, p)
		}
	}
	// hard links: names of one inode in the source are one inode restored
	byIno := map[uint64][]string{}
	for p, w := range want {
		if w.st.Mode&unix.S_IFMT == unix.S_IFREG && w.st.Nlink > 1 {
			byIno[w.st.Ino] = append(byIno[w.st.Ino], p)
		}
	}
	for _, names := range byIno {
		for _, n := range names[1:] {
			if g, g0 := got[n], got[names[0]]; g != nil && g0 != nil && g.st.Ino != g0.st.Ino {
				t.Errorf("%s: %s and %s: hard links in the source, not restored as one file", round, names[0], n)
			}
		}
	}
}

// compareDecoded compares what the checker decoded from a snapshot's
// archive with the source: the same paths, modes, owners, mtimes,
// contents (SHA-256 of what the payload references point to), symlink
// targets; hard links name a path of the same inode.
func compareDecoded(t *testing.T, round string, want map[string]*treeEntry, a *pbscheck.Archive) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range a.Entries {
		seen[e.Path] = true
		w, ok := want[e.Path]
		if !ok {
			t.Errorf("%s: checker: %s: in the archive, not in the source", round, e.Path)
			continue
		}
		if e.Hardlink != "" {
			if tw, ok := want[e.Hardlink]; !ok || tw.st.Ino != w.st.Ino {
				t.Errorf("%s: checker: %s: a hard link to %s, which is not the same file in the source", round, e.Path, e.Hardlink)
			}
			continue
		}
		if e.Mode != uint64(w.st.Mode) || e.UID != w.st.Uid || e.GID != w.st.Gid {
			t.Errorf("%s: checker: %s: mode %o owner %d:%d, source %o %d:%d", round, e.Path, e.Mode, e.UID, e.GID, w.st.Mode, w.st.Uid, w.st.Gid)
		}
		if !e.IsDir() && !e.Mtime.Equal(time.Unix(w.st.Mtim.Unix())) {
			t.Errorf("%s: checker: %s: mtime %v, source %v", round, e.Path, e.Mtime, time.Unix(w.st.Mtim.Unix()))
		}
		if e.IsRegular() && (e.SHA256 != w.sha || e.Size != uint64(w.st.Size)) {
			t.Errorf("%s: checker: %s: payload at offset %d holds %d bytes, SHA-256 %x; the source has %d bytes, %x", round, e.Path, e.Payload, e.Size, e.SHA256[:8], w.st.Size, w.sha[:8])
		}
		if e.IsSymlink() && e.Symlink != w.target {
			t.Errorf("%s: checker: %s: symlink to %q, source to %q", round, e.Path, e.Symlink, w.target)
		}
		if dev := [2]uint64{uint64(unix.Major(w.st.Rdev)), uint64(unix.Minor(w.st.Rdev))}; e.Type() == unix.S_IFCHR && e.Device != dev {
			t.Errorf("%s: checker: %s: device %d:%d, source %d:%d", round, e.Path, e.Device[0], e.Device[1], dev[0], dev[1])
		}
		if x := strings.Join(e.Xattrs, "\n"); x != w.xattrs {
			t.Errorf("%s: checker: %s: xattrs %q, source %q", round, e.Path, x, w.xattrs)
		}
	}
	for p := range want {
		if !seen[p] {
			t.Errorf("%s: checker: %s: in the source, not in the archive", round, p)
		}
	}
}

// incrSummary is the part of `cairn backup --json` the rounds log.
type incrSummary struct {
	Snapshot     string `json:"snapshot"`
	NewBytes     int64  `json:"new_bytes"`
	NewChunks    int64  `json:"new_chunks"`
	Chunks       int64  `json:"chunks"`
	FileArchives []struct {
		Mode         string `json:"mode"`
		Files        int64  `json:"files"`
		ReadFiles    int64  `json:"read_files"`
		ReadBytes    int64  `json:"read_bytes"`
		ReusedFiles  int64  `json:"reused_files"`
		ReusedBytes  int64  `json:"reused_bytes"`
		PaddingBytes int64  `json:"padding_bytes"`
		PayloadSize  int64  `json:"payload_size"`
	} `json:"file_archives"`
}

// incrChunkSize is the average chunk size of the rounds' archives.
const incrChunkSize = "64K"

// incrRun backs up the tree round after round and checks each snapshot.
type incrRun struct {
	st, id, src string
	key         []string // --keyfile KEY, or nothing
	checker     *pbscheck.Checker
	start       time.Time
	reused      int64 // files reused, all rounds so far
}

// round backs up the source as round r (at start + r minutes, so times
// strictly increase), restores the snapshot and compares it with the
// source, and checks it with pbscheck.
func (ir *incrRun) round(t *testing.T, r int, changes string) {
	t.Helper()
	round := fmt.Sprintf("round %d", r)
	at := ir.start.Add(time.Duration(r) * time.Minute).Format(time.RFC3339)
	args := append([]string{"--store", ir.st, "backup", "--type", "host", "--id", ir.id, "--time", at, "--no-sync", "--json",
		"--chunk-size", incrChunkSize}, ir.key...)
	res := e2e.MustCairn(t, append(args, "root.pxar:"+ir.src)...)
	var sum incrSummary
	e2e.DecodeJSON(t, res, &sum)
	if len(sum.FileArchives) != 1 {
		t.Fatalf("%s: summary %s", round, res.Stdout)
	}
	fa := sum.FileArchives[0]

	dst := filepath.Join(filepath.Dir(ir.src), fmt.Sprintf("restore-%02d", r))
	e2e.MustCairn(t, append([]string{"--store", ir.st, "restore", "--no-sync", sum.Snapshot, "root.pxar", dst}, ir.key...)...)
	want := scanTree(t, ir.src)
	compareRestored(t, round, ir.src, dst, want)
	incrOK(t, os.RemoveAll(dst))

	rep, err := ir.checker.Check(sum.Snapshot)
	if err != nil {
		t.Errorf("%s: %s: pbscheck: %v", round, sum.Snapshot, err)
	}
	check := "encrypted: chunks' magic and CRC only"
	if a := rep.Archives["root.pxar"]; a != nil {
		compareDecoded(t, round, want, a)
		if r == 0 {
			ir.layout(t, sum.Snapshot, a)
		}
		check = fmt.Sprintf("%d entries, %d payload refs, %d payload bytes unreferenced", len(a.Entries), a.PayloadRefs, a.Unreferenced)
		// cairn counts padding once per distinct chunk (what reads through
		// a cache cost); the stream lists a chunk again where it is
		// injected again, and a sequential reader passes every copy.
		if uint64(fa.PaddingBytes) > a.Unreferenced {
			t.Errorf("%s: backup reports %d padding bytes, pbscheck found only %d payload bytes no PAYLOAD_REF covers", round, fa.PaddingBytes, a.Unreferenced)
		}
		// The bound (25% of the reused bytes, plus what was read anew
		// since the previous snapshot).
		if live := fa.ReusedBytes + 16*fa.ReusedFiles; float64(fa.PaddingBytes) > 0.25*float64(live)+float64(fa.ReadBytes) {
			t.Errorf("%s: padding %d bytes for %d reused and %d read", round, fa.PaddingBytes, live, fa.ReadBytes)
		}
	} else if !rep.Encrypted {
		t.Errorf("%s: pbscheck decoded no root.pxar", round)
	}
	t.Logf("%s (%s): %s: read %d files (%d bytes), reused %d (%d bytes), padding %d, payload %d, %d of %d chunks new (%d bytes); pbscheck: %s, %d chunks checked (%d new)",
		round, changes, fa.Mode, fa.ReadFiles, fa.ReadBytes, fa.ReusedFiles, fa.ReusedBytes, fa.PaddingBytes, fa.PayloadSize,
		sum.NewChunks, sum.Chunks, sum.NewBytes, check, rep.Chunks, rep.NewChunks)
	if r > 0 && fa.Mode != "metadata" {
		t.Errorf("%s: change detection %q, not metadata", round, fa.Mode)
	}
	ir.reused += fa.ReusedFiles
	if t.Failed() {
		t.FailNow()
	}
}

// layout checks that the first snapshot's payload chunks hold what the
// test is about: a chunk with several files, a file over several
// chunks.
func (ir *incrRun) layout(t *testing.T, snap string, a *pbscheck.Archive) {
	t.Helper()
	x, err := pbscheck.ReadIndex(filepath.Join(ir.st, snap, "root.ppxar.didx"))
	if err != nil {
		t.Fatal(err)
	}
	most, spans := 0, ""
	for _, c := range x.Chunks {
		n := 0
		for _, e := range a.Entries {
			if !e.IsRegular() {
				continue
			}
			start, end := e.Payload, e.Payload+16+e.Size
			if start >= c.Start && end <= c.End {
				n++
			}
			if start < c.Start && end > c.Start && spans == "" {
				spans = e.Path
			}
		}
		most = max(most, n)
	}
	t.Logf("payload: %d chunks, up to %d files within one; %q spans chunks", len(x.Chunks), most, spans)
	if most < 2 || spans == "" {
		t.Fatalf("the payload's %d chunks do not hold what the test needs: at most %d files within a chunk, file spanning chunks %q", len(x.Chunks), most, spans)
	}
}

func newIncrRun(t *testing.T, id string, seed uint64, key ...string) (*incrRun, *incrTree) {
	t.Helper()
	dir := e2e.TmpfsDir(t, "cairn-incr-")
	st := filepath.Join(dir, "store")
	e2e.MustCairn(t, "--store", st, "init", "-q")
	src := filepath.Join(dir, "src")
	tr := newIncrTree(t, src, seed)
	return &incrRun{
		st: st, id: id, src: src, key: key,
		checker: &pbscheck.Checker{Store: st},
		start:   time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Second),
	}, tr
}

// TestIncrementalPBSFormat: 16 incremental backups of a changing tree
// (every kind of change of incrTree.change at least twice);
// each restored byte for byte and read by pbscheck as PBS would; then
// `cairn verify` passes.
func TestIncrementalPBSFormat(t *testing.T) {
	t.Parallel()
	ir, tr := newIncrRun(t, "incr", 2700)
	ir.round(t, 0, "initial")
	for r := 1; r <= 16; r++ {
		ir.round(t, r, tr.change(t, r))
	}
	// A file is reused once its stat was older than a backup's start by
	// cairn's racy margin (2 s) when it was recorded: not in round 1 (the
	// tree was just made), but within 16 rounds, each with a backup, a
	// restore and two reads of the tree.
	if ir.reused == 0 {
		t.Errorf("16 rounds reused no file of the previous snapshot")
	}
	if res := e2e.Cairn(t, nil, "--store", ir.st, "verify"); res.Code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", res.Code, res.Stdout, e2e.Tail(res.Stderr))
	}
}

// TestIncrementalPBSFormatEncrypted: the same with an encrypted archive
// for a few rounds: restored byte for byte; pbscheck checks manifest,
// indexes and each chunk's magic and CRC (it has no key to decode).
func TestIncrementalPBSFormatEncrypted(t *testing.T) {
	t.Parallel()
	keyDir := t.TempDir()
	key := filepath.Join(keyDir, "none.key")
	e2e.MustCairn(t, "key", "create", "--kdf", "none", key)
	ir, tr := newIncrRun(t, "incr-crypt", 2701, "--keyfile", key)
	ir.round(t, 0, "initial")
	for r := 1; r <= 5; r++ {
		ir.round(t, r, tr.change(t, r))
	}
	if res := e2e.Cairn(t, nil, "--store", ir.st, "verify", "--keyfile", key); res.Code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", res.Code, res.Stdout, e2e.Tail(res.Stderr))
	}
}

func incrOK(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
