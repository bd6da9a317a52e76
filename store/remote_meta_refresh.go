package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sys/unix"
)

// Refreshing a remote store's local mirror (rule 5 of the safety
// protocol, doc.go). The bucket's top-level "directories" are listed;
// .chunks/ and .cairn/ are passed over and every other one (ns/, ct/,
// host/, vm/) is listed whole, in key order, which keeps a snapshot's
// keys, and a group's, together: the refresh holds one snapshot's
// objects and one group's snapshot times at a time, and the names of
// the groups seen. A snapshot's files are downloaded when new or changed
// (size and LastModified, which the local file keeps as its mtime), its
// manifest last. A local snapshot that has a manifest while the bucket
// has none (forgotten by another host) is removed, unless it is locked
// here (a backup writing it, a reader). Unfinished snapshots are
// mirrored too (GC marks their indexes) and removed with the bucket's;
// a local unfinished one the refresh did not make is left (a backup
// starting, or one that died here).

// metaSync serializes a store's refreshes.
type metaSync struct {
	mu sync.Mutex
}

// maxSnapshotObjects bounds the objects of one snapshot a refresh takes.
const maxSnapshotObjects = 10000

// maxRefused bounds the refused keys a RefreshError lists.
const maxRefused = 20

// RefreshError lists the bucket keys a refresh refused (a hostile or
// foreign object, one too large) while it mirrored the others.
type RefreshError struct {
	Refused []error // at most maxRefused
	More    int     // refused beyond those
}

func (e *RefreshError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "refresh from the bucket: %d keys refused", len(e.Refused)+e.More)
	for _, r := range e.Refused {
		b.WriteString("; " + r.Error())
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "; and %d more", e.More)
	}
	return b.String()
}

func (e *RefreshError) Unwrap() []error { return e.Refused }

// Refresh brings a remote store's local snapshot directories up to date
// with the bucket (see above); on a local store it does nothing. A
// *RefreshError lists what it refused to mirror; another error means the
// bucket could not be listed, and then nothing local was removed.
func (s *Store) Refresh(ctx context.Context) error {
	if s.remote == nil {
		return nil
	}
	s.remote.meta.mu.Lock()
	defer s.remote.meta.mu.Unlock()
	r := &refresher{s: s, ctx: ctx, seen: map[string]bool{}, times: map[string]bool{}}
	tops, err := s.remote.bucket.ListDirs(ctx, "")
	if err != nil {
		return fmt.Errorf("refresh from bucket %s: %w", s.remote.cfg.Bucket, err)
	}
	for _, top := range tops {
		switch top {
		case chunkDir + "/", ".cairn/":
			continue
		case "ns/", TypeCT + "/", TypeHost + "/", TypeVM + "/":
		default:
			r.refuse(&KeyError{Key: top, Reason: "not a namespace or backup type directory"})
			continue
		}
		for obj, err := range s.remote.bucket.List(ctx, top, "") {
			if err != nil {
				return fmt.Errorf("refresh from bucket %s: list %s: %w", s.remote.cfg.Bucket, top, err)
			}
			if err := r.add(obj); err != nil {
				return err
			}
		}
	}
	if err := r.flushGroup(); err != nil {
		return err
	}
	if err := r.removeUnseenGroups(); err != nil {
		return err
	}
	return r.result()
}

// refresher is one refresh's state.
type refresher struct {
	s   *Store
	ctx context.Context
	buf []byte // download buffer, reused

	group string          // the current group's key prefix
	g     Group           // and the group
	times map[string]bool // its snapshots in the bucket: true with a manifest
	seen  map[string]bool // the key prefixes of the groups seen

	snapKey string // the current snapshot's key prefix
	snap    Snapshot
	objs    []objstore.ObjectInfo // its objects
	names   []string

	refused []error
	more    int
}

func (r *refresher) refuse(err error) {
	if len(r.refused) < maxRefused {
		r.refused = append(r.refused, err)
	} else {
		r.more++
	}
}

func (r *refresher) result() error {
	if len(r.refused) == 0 {
		return nil
	}
	return &RefreshError{Refused: r.refused, More: r.more}
}

// add takes one listed object; an error (not a refused key) ends the
// refresh.
func (r *refresher) add(obj objstore.ObjectInfo) error {
	snap, name, err := parseSnapshotKey(obj.Key)
	if err != nil {
		r.refuse(err)
		return nil
	}
	if obj.Size > fileLimit(name) || obj.Size < 0 {
		r.refuse(&KeyError{Key: obj.Key, Reason: fmt.Sprintf("%d bytes, more than the %d a file %s may have",
			obj.Size, fileLimit(name), name)})
		return nil
	}
	snapKey := snapshotFile(snap, "")
	if snapKey != r.snapKey {
		if err := r.flushSnapshot(); err != nil {
			return err
		}
		if g := groupKey(snap.Group); g != r.group {
			if err := r.flushGroup(); err != nil {
				return err
			}
			r.group, r.g = g, snap.Group
			r.seen[g] = true
		}
		r.snapKey, r.snap = snapKey, snap
	}
	if len(r.objs) >= maxSnapshotObjects {
		r.refuse(&KeyError{Key: obj.Key, Reason: fmt.Sprintf("snapshot has more than %d objects", maxSnapshotObjects)})
		return nil
	}
	r.objs, r.names = append(r.objs, obj), append(r.names, name)
	return nil
}

// groupKey is a group's key prefix in the bucket.
func groupKey(g Group) string { return path.Join(g.NS.rel(), g.Type, g.ID) + "/" }

// flushSnapshot mirrors the current snapshot's objects: the manifest
// last, and the protection marker removed when the bucket has none.
func (r *refresher) flushSnapshot() error {
	if r.snapKey == "" {
		return nil
	}
	objs, names, snap := r.objs, r.names, r.snap
	r.objs, r.names, r.snapKey = r.objs[:0], r.names[:0], ""
	if err := r.ctx.Err(); err != nil {
		return err
	}
	dir := r.s.SnapshotPath(snap)
	dirfd, err := r.s.openSnapshotDirAt(snap)
	if err != nil {
		r.refuse(fmt.Errorf("snapshot %s not mirrored: %w", snap, err))
		return nil
	}
	defer unix.Close(dirfd)
	manifest, protected := -1, false
	for i, name := range names {
		switch name {
		case ManifestName:
			manifest = i
			continue
		case ProtectedName:
			protected = true
		}
		if err := r.mirror(dirfd, dir, name, objs[i]); err != nil {
			return err
		}
	}
	if manifest < 0 {
		r.times[snap.TimeString()] = false
		return nil
	}
	if err := r.mirror(dirfd, dir, ManifestName, objs[manifest]); err != nil {
		return err
	}
	r.times[snap.TimeString()] = true
	if !protected {
		if err := unix.Unlinkat(dirfd, ProtectedName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			r.refuse(fmt.Errorf("%s: %w", filepath.Join(dir, ProtectedName), err))
		}
	}
	return nil
}

// mirror downloads one object unless the local file is up to date. A
// refusal (a local entry in the way, an object too large) is recorded;
// other errors end the refresh.
func (r *refresher) mirror(dirfd int, dir, name string, obj objstore.ObjectInfo) error {
	ok, err := mirrorUpToDate(dirfd, dir, name, obj)
	if err != nil {
		r.refuse(err)
		return nil
	}
	if ok {
		return nil
	}
	r.buf, err = r.s.remote.download(r.ctx, dirfd, dir, name, obj, r.buf)
	var ke *KeyError
	if errors.As(err, &ke) {
		r.refuse(err)
		return nil
	}
	return err
}

// flushGroup ends the current group: its local finished snapshots the
// bucket has no manifest of are removed.
func (r *refresher) flushGroup() error {
	if err := r.flushSnapshot(); err != nil {
		return err
	}
	if r.group == "" {
		return nil
	}
	g, times := r.g, r.times
	r.group, r.times = "", map[string]bool{}
	return r.removeVanished(g, times)
}

// removeUnseenGroups removes the local finished snapshots of the groups
// the bucket has no object of.
func (r *refresher) removeUnseenGroups() error {
	nss, err := r.s.Namespaces("")
	if err != nil {
		return err
	}
	for _, ns := range nss {
		groups, err := r.s.Groups(ns)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if !r.seen[groupKey(g)] {
				if err := r.removeVanished(g, nil); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// removeVanished removes g's local snapshots that have a manifest while
// times (the bucket's snapshots: true when finished) has none, each after
// a HEAD that confirms it is gone (it may have come since the listing),
// and the unfinished ones the refresh made (mirrorMarker) that the
// bucket has nothing of.
func (r *refresher) removeVanished(g Group, times map[string]bool) error {
	if r.s.CheckGroupDirs(g) != nil {
		return nil // a symlink on the way (refused when mirrored), or gone
	}
	names, err := readNames(r.s.GroupPath(g))
	if err != nil {
		return nil
	}
	slices.Sort(names)
	for _, n := range names {
		t, err := ParseTime(n)
		finished, inBucket := times[n]
		if err != nil || finished {
			continue
		}
		snap := Snapshot{Group: g, Time: t}
		dir := r.s.SnapshotPath(snap)
		_, err = os.Lstat(filepath.Join(dir, ManifestName))
		unfinished := err != nil
		if unfinished {
			// a backup starting or one that died here stays; what the
			// mirror made goes with the bucket's
			if _, err := os.Lstat(filepath.Join(dir, mirrorMarker)); err != nil || inBucket {
				continue
			}
		}
		if err := r.s.removeForgotten(r.ctx, snap, unfinished); err != nil {
			return err
		}
	}
	return nil
}

// removeForgotten removes the local copy of a snapshot that has left the
// bucket (its manifest; for an unfinished one, all of it), unless it is
// locked here or the bucket has it again (it may have come since the
// listing).
func (s *Store) removeForgotten(ctx context.Context, snap Snapshot, unfinished bool) error {
	gone, err := s.remote.snapshotGone(ctx, snap, unfinished)
	if err != nil {
		return fmt.Errorf("refresh: snapshot %s: %w", snap, err)
	}
	if !gone {
		return nil
	}
	l, err := s.lockSnapshot(ctx, snap, true, 0)
	if err != nil {
		return nil // in use here: the next refresh removes it
	}
	defer l.Unlock()
	dir := s.SnapshotPath(snap)
	if !l.sameFile(dir) {
		return nil
	}
	return removeViaTrash(dir, snap.TimeString())
}

// refreshOnOpen refreshes a remote store as Open opens it. Refused keys
// do not keep the store from opening (they are logged); a bucket that
// cannot be listed does.
func (s *Store) refreshOnOpen(ctx context.Context) error {
	err := s.Refresh(ctx)
	var re *RefreshError
	if errors.As(err, &re) {
		slog.Warn("store opened; some of the bucket's objects are not mirrored", "store", s.root, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.root, err)
	}
	return nil
}

// snapshotGone reports whether the bucket has no manifest of snap and,
// when all is true, no object of it at all.
func (r *remote) snapshotGone(ctx context.Context, snap Snapshot, all bool) (bool, error) {
	_, err := r.bucket.Head(ctx, snapshotFile(snap, ManifestName))
	if err == nil {
		return false, nil
	}
	if !errors.Is(err, objstore.ErrNotExist) {
		return false, err
	}
	if !all {
		return true, nil
	}
	for _, err := range r.bucket.List(ctx, snapshotFile(snap, ""), "") {
		return false, err // an object (or an error): not gone
	}
	return true, nil
}
