package s3store

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/objstore"
	"golang.org/x/sync/errgroup"
	"golang.org/x/sync/semaphore"
	"golang.org/x/sys/unix"
)

// Refreshing a remote store's local mirror (rule 5 of the safety
// protocol, docs/design/store.md). The bucket's top-level "directories" are listed;
// .chunks/ and .cairn/ are passed over and every other one (ns/, ct/,
// host/, vm/) is listed whole, taken in key order (listed in ranges of
// whole groups, a few at once: meta_list.go), which keeps a snapshot's
// keys, and a group's, together: the refresh holds the objects of the
// snapshots being downloaded (at most refreshWorkers at once, each by a
// worker of its own) and one group's snapshot times at a time, and the
// names of the groups seen. A snapshot's files are downloaded when new
// or changed (size and LastModified, which the local file keeps as its
// mtime), its manifest last. A local snapshot that has a manifest while the bucket
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

// refreshAll is Refresh on a remote store (see above).
func (s *rstore) refreshAll(ctx context.Context) error {
	s.remote.meta.mu.Lock()
	defer s.remote.meta.mu.Unlock()
	r := newRefresher(ctx, s)
	err := r.finish(r.all())
	var re *RefreshError
	if err == nil || errors.As(err, &re) {
		s.noteRefreshed()
	}
	return err
}

// all lists and mirrors every snapshot prefix of the bucket.
func (r *refresher) all() error {
	bucket := r.s.remote.bucket
	tops, err := bucket.ListDirs(r.ctx, "")
	if err != nil {
		return fmt.Errorf("refresh from bucket %s: %w", r.s.remote.cfg.Bucket, err)
	}
	for _, top := range tops {
		switch top {
		case chunkDir + "/", ".cairn/":
			continue
		case "ns/", store.TypeCT + "/", store.TypeHost + "/", store.TypeVM + "/":
		default:
			r.refuse(&KeyError{Key: top, Reason: "not a namespace or backup type directory"})
			continue
		}
		if err := r.list(top); err != nil {
			return err
		}
	}
	if err := r.flushGroup(); err != nil {
		return err
	}
	return r.removeUnseenGroups()
}

// listWhole takes every object under prefix, in one listing.
func (r *refresher) listWhole(prefix string) error {
	for obj, err := range r.s.remote.bucket.List(r.ctx, prefix, "") {
		if err != nil {
			return fmt.Errorf("refresh from bucket %s: list %s: %w", r.s.remote.cfg.Bucket, prefix, err)
		}
		if err := r.add(obj); err != nil {
			return err
		}
	}
	return nil
}

// refreshGroup is Refresh for one group (a backup about to start, a
// group's forget, holding the group's lock): its snapshots from other
// hosts are there, and its time order is the bucket's. Refused keys are
// logged.
func (s *rstore) refreshGroup(ctx context.Context, g store.Group) error {
	s.remote.meta.mu.Lock()
	defer s.remote.meta.mu.Unlock()
	r := newRefresher(ctx, s)
	r.group, r.g = groupKey(g), g
	err := r.listWhole(r.group)
	if err == nil {
		err = r.flushGroup()
	}
	err = r.finish(err)
	var re *RefreshError
	if errors.As(err, &re) {
		s.remote.bucket.Logger().Warn("some of the bucket's objects are not mirrored", "group", g, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("group %s: %w", g, err)
	}
	return nil
}

// A refresh downloads the files of up to refreshWorkers snapshots at
// once (a first refresh of 10,000 snapshots is 20,000 GETs or more,
// each a round trip), holding at most refreshMemory bytes of them (a
// larger file alone), and a worker keeps a buffer of at most
// refreshKeepBuf bytes from one file to the next.
const (
	refreshWorkers = 32
	refreshMemory  = 64 << 20
	refreshKeepBuf = 1 << 20
)

func newRefresher(ctx context.Context, s *rstore) *refresher {
	eg, ctx := errgroup.WithContext(ctx)
	eg.SetLimit(refreshWorkers)
	return &refresher{s: s, ctx: ctx, eg: eg, seen: map[string]bool{}, times: map[string]bool{},
		memory: semaphore.NewWeighted(refreshMemory)}
}

// finish waits for the downloads and returns the refresh's error: err,
// a download's, or the refused keys.
func (r *refresher) finish(err error) error {
	if werr := r.eg.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	return r.result()
}

// refresher is one refresh's state. The listing goes on in the calling
// goroutine; each snapshot's downloads run in a bounded pool (eg).
type refresher struct {
	s   *rstore
	ctx context.Context // ends when a download fails
	eg  *errgroup.Group

	memory *semaphore.Weighted // bytes being downloaded

	group string          // the current group's key prefix
	g     store.Group     // and the group
	times map[string]bool // its snapshots in the bucket: true with a manifest
	seen  map[string]bool // the key prefixes of the groups seen

	snapKey string // the current snapshot's key prefix
	snap    store.Snapshot
	objs    []objstore.ObjectInfo // its objects
	names   []string

	mu      sync.Mutex // refused, more
	refused []error
	more    int
}

func (r *refresher) refuse(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
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
	snapKey := store.SnapshotFile(snap, "")
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
func groupKey(g store.Group) string { return path.Join(g.NS.Rel(), g.Type, g.ID) + "/" }

// flushSnapshot hands the current snapshot's objects to a download
// worker (mirrorSnapshot), noting it in the group's times.
func (r *refresher) flushSnapshot() error {
	if r.snapKey == "" {
		return nil
	}
	objs, names, snap := r.objs, r.names, r.snap
	r.objs, r.names, r.snapKey = nil, nil, ""
	if err := r.ctx.Err(); err != nil {
		return err
	}
	r.times[snap.TimeString()] = slices.Contains(names, store.ManifestName)
	r.eg.Go(func() error { return r.mirrorSnapshot(snap, objs, names) })
	return nil
}

// mirrorSnapshot downloads what changed of one snapshot, the manifest
// last, and removes the local protection marker when the bucket has
// none.
func (r *refresher) mirrorSnapshot(snap store.Snapshot, objs []objstore.ObjectInfo, names []string) error {
	dir := r.s.SnapshotPath(snap)
	dirfd, err := r.s.openSnapshotDirAt(snap)
	if err != nil {
		r.refuse(fmt.Errorf("snapshot %s not mirrored: %w", snap, err))
		return nil
	}
	defer unix.Close(dirfd)
	manifest, protected := -1, false
	var buf []byte
	for i, name := range names {
		switch name {
		case store.ManifestName:
			manifest = i
			continue
		case store.ProtectedName:
			protected = true
		}
		if gone, err := r.mirror(dirfd, dir, name, objs[i], &buf); err != nil || gone {
			return err
		}
	}
	if manifest < 0 {
		return nil
	}
	if gone, err := r.mirror(dirfd, dir, store.ManifestName, objs[manifest], &buf); err != nil || gone {
		return err
	}
	if !protected {
		if err := unix.Unlinkat(dirfd, store.ProtectedName, 0); err != nil && !errors.Is(err, unix.ENOENT) {
			r.refuse(fmt.Errorf("%s: %w", filepath.Join(dir, store.ProtectedName), err))
		}
	}
	return nil
}

// mirror downloads one object unless the local file is up to date. A
// refusal (a local entry in the way, an object too large) is recorded;
// other errors end the refresh. gone is an object deleted since the
// listing (a forget under way): the rest of its snapshot is passed over
// until the next refresh.
func (r *refresher) mirror(dirfd int, dir, name string, obj objstore.ObjectInfo, buf *[]byte) (gone bool, err error) {
	ok, exists, err := mirrorUpToDate(dirfd, dir, name, obj)
	if err != nil {
		r.refuse(err)
		return false, nil
	}
	if ok {
		return false, nil
	}
	n := min(obj.Size, refreshMemory) // add refused a negative size
	if err := r.memory.Acquire(r.ctx, n); err != nil {
		return false, err
	}
	*buf, err = r.s.remote.download(r.ctx, dirfd, dir, name, obj, *buf)
	if cap(*buf) > refreshKeepBuf {
		*buf = nil
	}
	r.memory.Release(n)
	if err == nil && exists && name == store.ManifestName {
		// the snapshot index takes a finished snapshot's listing from
		// what it recorded while the group's directory is unchanged
		// (store/snapindex_group.go); a manifest replaced in place (one
		// forgotten and made again at the same time between two
		// refreshes) changes the group's times so that it looks again
		r.s.touchDir(filepath.Dir(dir))
	}
	var ke *KeyError
	switch {
	case errors.As(err, &ke):
		r.refuse(err)
		return false, nil
	case errors.Is(err, objstore.ErrNotExist):
		return true, nil
	}
	return false, err
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

// refreshOnOpen refreshes a remote store as Open opens it. Refused keys
// do not keep the store from opening (they are logged); a bucket that
// cannot be listed does.
func (s *rstore) refreshOnOpen(ctx context.Context) error {
	err := s.Refresh(ctx)
	var re *RefreshError
	if errors.As(err, &re) {
		s.remote.bucket.Logger().Warn("store opened; some of the bucket's objects are not mirrored", "store", s.root, "err", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("open store %s: %w", s.root, err)
	}
	return nil
}
