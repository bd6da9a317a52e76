package layout

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store"
)

// Layout is the tree a mount shows of a store, with what one mount
// shares: the store, its snapshot index and how to list.
type Layout struct {
	Store *store.Store
	// Index keeps snapshot listings between mounts (store.ListingIndex);
	// nil lists every snapshot from its manifest.
	Index *store.ListingIndex
	// Refresh is how stale the listings that change (namespaces, types,
	// groups) may be.
	Refresh time.Duration
	// Started is the time of the directories above the snapshots.
	Started time.Time
	// FileMode is the permission bits of images and blobs.
	FileMode uint32
	// Trees: file archives are shown (a reader of them is plugged in);
	// else they are left out, with a log line.
	Trees bool
	// Check, if set, tells whether snapshot snap, manifest m, can be
	// read (an encrypted one needs its key): Manifest.Get fails with
	// its error.
	Check func(snap store.Snapshot, m *store.Manifest) error
	Log   *slog.Logger
}

// NSDir is namespace ns's directory: an "ns" directory when it has child
// namespaces, and one directory per backup type that has groups.
func (l *Layout) NSDir(ns store.NS) *Dir {
	return NewDir("/"+string(ns), l.Refresh, l.nsLister(ns), l.Log)
}

// GroupDir is group g's directory: its finished snapshots and latest.
func (l *Layout) GroupDir(g store.Group) *Dir {
	return NewDir(g.String(), l.Refresh, func(ctx context.Context) ([]Entry, error) {
		return l.groupEntries(g)
	}, l.Log)
}

// SnapshotDir is snapshot snap's directory, its archives; known is what
// the group's listing knew of its manifest (zero: nothing).
func (l *Layout) SnapshotDir(snap store.Snapshot, known store.ManifestStamp) *Dir {
	return NewDir(snap.String(), 0, l.snapshotLister(snap, known), l.Log)
}

// dirEntry is the entry of a directory at path (in the store) that dir
// lists.
func (l *Layout) dirEntry(name, path string, mtime time.Time, dir func() *Dir) Entry {
	return Entry{Name: name, Kind: KindDir, Mode: ModeDir, Ino: Ino(path), Mtime: mtime, dir: dir}
}

func (l *Layout) nsLister(ns store.NS) Lister {
	base := ns.Rel() // the namespace's directory in the store: the key of the inode numbers below it
	return func(ctx context.Context) ([]Entry, error) {
		var es []Entry
		children, err := l.childNamespaces(ns)
		if err != nil {
			return nil, err
		}
		if len(children) > 0 {
			es = append(es, l.dirEntry("ns", base+"ns", l.Started, func() *Dir {
				return NewDir(base+"ns", l.Refresh, l.nsListLister(ns), l.Log)
			}))
		}
		groups, err := l.Store.Groups(ns)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, g := range groups {
			if typ := g.Type; !seen[typ] {
				seen[typ] = true
				es = append(es, l.dirEntry(typ, base+typ, l.Started, func() *Dir {
					return NewDir(base+typ, l.Refresh, l.typeLister(ns, typ), l.Log)
				}))
			}
		}
		return es, nil
	}
}

// childNamespaces returns the names of ns's direct child namespaces.
func (l *Layout) childNamespaces(ns store.NS) ([]string, error) {
	all, err := l.Store.Namespaces(ns)
	if err != nil {
		return nil, err
	}
	depth := len(ns.Parts()) + 1
	var out []string
	for _, n := range all {
		if p := n.Parts(); len(p) == depth {
			out = append(out, p[depth-1])
		}
	}
	return out, nil
}

// nsListLister lists the "ns" directory of a namespace: its children.
func (l *Layout) nsListLister(ns store.NS) Lister {
	return func(ctx context.Context) ([]Entry, error) {
		children, err := l.childNamespaces(ns)
		if err != nil {
			return nil, err
		}
		es := make([]Entry, 0, len(children))
		for _, c := range children {
			child := store.NS(c)
			if ns != "" {
				child = ns + "/" + child
			}
			es = append(es, l.dirEntry(c, strings.TrimSuffix(child.Rel(), "/"), l.Started, func() *Dir {
				return l.NSDir(child)
			}))
		}
		return es, nil
	}
}

// typeLister lists the groups of one backup type in a namespace.
func (l *Layout) typeLister(ns store.NS, typ string) Lister {
	return func(ctx context.Context) ([]Entry, error) {
		groups, err := l.Store.Groups(ns)
		if err != nil {
			return nil, err
		}
		var es []Entry
		for _, g := range groups {
			if g.Type == typ {
				es = append(es, l.dirEntry(g.ID, g.String(), l.Started, func() *Dir { return l.GroupDir(g) }))
			}
		}
		return es, nil
	}
}

// groupEntries lists a group: its finished snapshots (one in progress is
// not shown) and latest, the newest of them.
func (l *Layout) groupEntries(g store.Group) ([]Entry, error) {
	snaps, err := l.Store.MountSnapshots(l.Index, g)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // a forgotten group: empty (a group mount's root stays)
	}
	if err != nil {
		return nil, err
	}
	var es []Entry
	var newest string
	for _, si := range snaps {
		if !si.Finished {
			continue
		}
		snap, stamp := si.Snapshot, si.Stamp
		es = append(es, l.dirEntry(si.TimeString(), snap.String(), snap.Time, func() *Dir {
			return l.SnapshotDir(snap, stamp)
		}))
		newest = si.TimeString()
	}
	if newest != "" {
		// The kernel caches a symlink's target (FUSE_CACHE_SYMLINKS) per
		// inode: latest is a new inode when its target moves, so a lookup
		// after the move finds the new one with no cached target (and the
		// re-list reports the old entry gone). So a node answers the
		// target its inode number was made for, never another.
		es = append(es, Entry{Name: Latest, Kind: KindLatest, Mode: ModeLink, Ino: Ino(g.String(), Latest, newest),
			Size: uint64(len(newest)), Mtime: l.Started, Target: newest})
	}
	return es, nil
}

// log is the layout's logger; a nil Log logs nothing.
func (l *Layout) log() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}
