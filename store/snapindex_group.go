package store

import (
	"fmt"
	"time"

	"github.com/cairnfs/cairn/internal/dirent"
	"golang.org/x/sys/unix"
)

// groupDirKey identifies one state of a group's directory: every add,
// remove or rename of a snapshot directory in it (backup, forget's
// rename-then-remove, prune, sync, tape restore) moves its mtime and
// ctime.
type groupDirKey struct {
	Ino   uint64 `json:"i"`
	Mtime int64  `json:"m"`
	Ctime int64  `json:"c"`
}

// MountSnapshot is a snapshot as a mount's group listing found it, and
// the stamp to hand to Listing for it.
type MountSnapshot struct {
	SnapshotInfo
	Stamp ManifestStamp
}

// MountSnapshots lists group g for a mount with its index x (oldest first; Protected is not
// filled). A finished snapshot whose index entry was made in this very
// state of the group's directory (same inode, mtime and ctime, recorded
// only once that ctime had settled) and of this snapshot directory (its
// d_ino from the group's getdents) is taken from the index with no stat:
// what a mount lists of a finished snapshot never changes for the life
// of its directory (docs/design/store.md). The others are stat'ed as Store.Snapshots
// does. A nil index lists with Store.Snapshots.
func (s *Store) MountSnapshots(x *ListingIndex, g Group) ([]MountSnapshot, error) {
	if x == nil {
		infos, err := s.Snapshots(g)
		out := make([]MountSnapshot, len(infos))
		for i, si := range infos {
			out[i] = MountSnapshot{SnapshotInfo: si}
		}
		return out, err
	}
	fd, err := openDirFd(s.GroupPath(g))
	if err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", g, notFound(err))
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", g, err)
	}
	gk := &groupDirKey{Ino: st.Ino, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
	var buf []byte
	ds, err := dirent.Read(fd, &buf)
	if err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", g, err)
	}
	dirent.SortByName(ds)
	out, check := x.fromIndex(g, gk, ds)
	if gk.Ctime >= time.Now().Add(-snapIndexSettle).UnixNano() {
		gk = nil // too new to be recorded
	}
	names := make([]string, len(check))
	infos := make([]SnapshotInfo, len(check))
	for j, i := range check {
		names[j], infos[j] = out[i].TimeString(), out[i].SnapshotInfo
	}
	statSnapshots(fd, names, infos)
	for j, i := range check {
		out[i].SnapshotInfo = infos[j]
		if infos[j].Finished {
			out[i].Stamp = ManifestStamp{k: infos[j].manifest, group: gk, dir: out[i].Stamp.dir}
		}
	}
	if gk != nil {
		x.record(out, check)
	}
	return out, nil
}

// record notes the group's settled state in the entries of the stat'ed
// snapshots whose listing is of the manifest the stat found (a live
// mount re-lists a group but not a snapshot it listed already).
func (x *ListingIndex) record(out []MountSnapshot, check []int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, i := range check {
		st := out[i].Stamp
		key := out[i].String()
		e, ok := x.entries[key]
		if !ok || st.group == nil || e.Listing == nil || e.Manifest != st.k ||
			(e.Group != nil && *e.Group == *st.group && e.Dir == st.dir) {
			continue
		}
		e.Group, e.Dir = st.group, st.dir
		x.entries[key] = e
		x.changed(key)
	}
}

// fromIndex makes the infos of the snapshots among ds, those the index
// vouches for filled, and says which are left to stat.
func (x *ListingIndex) fromIndex(g Group, gk *groupDirKey, ds []dirent.Entry) (out []MountSnapshot, check []int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.load()
	for _, d := range ds {
		t, err := ParseTime(d.Name)
		if err != nil {
			continue
		}
		ms := MountSnapshot{SnapshotInfo: SnapshotInfo{Snapshot: Snapshot{Group: g, Time: t}}}
		ms.Stamp.dir = d.Ino
		e, ok := x.entries[ms.String()]
		if ok && e.Listing != nil && e.Group != nil && *e.Group == *gk && e.Dir == d.Ino && e.Manifest != (fileKey{}) {
			ms.Finished, ms.manifest = true, e.Manifest
			ms.Stamp = ManifestStamp{k: e.Manifest, group: e.Group, dir: d.Ino, trusted: true}
		} else {
			check = append(check, len(out))
		}
		out = append(out, ms)
	}
	return out, check
}

func openDirFd(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}
