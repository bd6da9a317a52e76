package fs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

func pxMeta(mode uint64, mtime int64) *pxar.Metadata {
	return &pxar.Metadata{Stat: pxar.Stat{Mode: mode, UID: 1000, GID: 100, Mtime: pxar.Timestamp{Secs: mtime, Nanos: 5}}}
}

// TestPxarTreeMount mounts a split pxar archive through PxarTrees and
// checks what a user sees: names, modes, owners, times, contents,
// symlinks, hard links (one inode), xattrs and ACLs.
func TestPxarTreeMount(t *testing.T) {
	needFUSE(t)
	var meta, payload bytes.Buffer
	enc, err := pxar.NewEncoder(&meta, &payload, pxMeta(pxar.ModeIFDIR|0o755, 1600000000))
	if err != nil {
		t.Fatal(err)
	}
	big := randomData(5, 3<<20+17)
	small := []byte("hello pxar\n")
	fm := pxMeta(pxar.ModeIFREG|0o640, 1600000001)
	fm.Xattrs = []pxar.Xattr{{Name: []byte("user.note"), Value: []byte("kept")}}
	grp := uint64(pxar.ACLRead | pxar.ACLWrite)
	fm.ACL.Users = []pxar.ACLEntry{{ID: 2000, Perm: pxar.ACLRead}}
	fm.ACL.GroupObj = &grp
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(enc.CreateDirectory("a", pxMeta(pxar.ModeIFDIR|0o700, 1600000002)))
	link, err := enc.AddFile("big.bin", pxMeta(pxar.ModeIFREG|0o644, 1600000003), uint64(len(big)), bytes.NewReader(big))
	must(err)
	_, err = enc.AddFile("note.txt", fm, uint64(len(small)), bytes.NewReader(small))
	must(err)
	must(enc.FinishDirectory())
	must(enc.AddHardlink("hard.bin", "a/big.bin", link))
	must(enc.AddSymlink("sym", pxMeta(pxar.ModeIFLNK|0o777, 1600000004), "a/note.txt"))
	must(enc.Close())

	s, err := store.CreateWith(filepath.Join(t.TempDir(), "store"), store.CreateOptions{LazyPrefixDirs: true})
	must(err)
	b, err := s.StartBackup(context.Background(), store.Group{Type: "host", ID: "px"}, time.Unix(1700000000, 0))
	must(err)
	b.Sync = store.SyncNone
	must(addDynamic(s, b, "root.mpxar.didx", meta.Bytes()))
	must(addDynamic(s, b, "root.ppxar.didx", payload.Bytes()))
	must(b.Finish())

	_, mnt, _ := mountT(t, Options{Store: s, Trees: PxarTrees{}})
	root := filepath.Join(mnt, b.Snapshot().String(), "root.pxar")
	got, err := os.ReadFile(filepath.Join(root, "a", "big.bin"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("big.bin: %v (equal %v)", err, bytes.Equal(got, big))
	}
	if got, _ := os.ReadFile(filepath.Join(root, "sym")); !bytes.Equal(got, small) {
		t.Fatalf("through the symlink: %q", got)
	}
	if target, _ := os.Readlink(filepath.Join(root, "sym")); target != "a/note.txt" {
		t.Fatalf("readlink %q", target)
	}
	var st, hst unix.Stat_t
	must(unix.Lstat(filepath.Join(root, "a", "note.txt"), &st))
	if st.Mode != syscall.S_IFREG|0o640 || st.Uid != 1000 || st.Gid != 100 || st.Mtim.Sec != 1600000001 || st.Mtim.Nsec != 5 || st.Size != int64(len(small)) {
		t.Fatalf("note.txt stat %+v", st)
	}
	must(unix.Lstat(filepath.Join(root, "a", "big.bin"), &st))
	must(unix.Lstat(filepath.Join(root, "hard.bin"), &hst))
	if st.Ino != hst.Ino || hst.Size != int64(len(big)) {
		t.Fatalf("hard link: inode %d vs %d, size %d", st.Ino, hst.Ino, hst.Size)
	}
	buf := make([]byte, 64)
	n, err := unix.Getxattr(filepath.Join(root, "a", "note.txt"), "user.note", buf)
	if err != nil || string(buf[:n]) != "kept" {
		t.Fatalf("xattr: %q %v", buf[:n], err)
	}
	if n, err := unix.Getxattr(filepath.Join(root, "a", "note.txt"), "system.posix_acl_access", buf); err != nil || n == 0 {
		t.Fatalf("acl xattr: %d %v", n, err)
	}
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) != 3 {
		t.Fatalf("root lists %v %v", ents, err)
	}
	if _, err := os.Stat(filepath.Join(root, "a", "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing name: %v", err)
	}
}
