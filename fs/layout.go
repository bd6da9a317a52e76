package fs

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"time"

	"github.com/cairnfs/cairn/store"
	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// latestName is the symlink in each group to its newest finished snapshot.
const latestName = "latest"

// nsPath is a namespace's directory in the store, with a trailing slash
// ("" for the root namespace): the key of the inode numbers below it.
func nsPath(ns store.NS) string {
	var b strings.Builder
	for _, p := range ns.Parts() {
		b.WriteString("ns/")
		b.WriteString(p)
		b.WriteByte('/')
	}
	return b.String()
}

// listDir is the entry of a directory at path (in the store) whose
// content comes from list, re-listed after ttl (0: never).
func (f *mountFS) listDir(name, path string, ttl time.Duration, list lister, mtime time.Time) entry {
	attr := f.makeAttr(modeDir, inoOf(path), 0, mtime)
	return entry{name: name, attr: attr, make: func(a fuse.Attr) gofs.InodeEmbedder {
		return f.newDir(a, path, ttl, list)
	}}
}

// nsLister lists a namespace: an "ns" directory when it has child
// namespaces, and one directory per backup type that has groups.
func (f *mountFS) nsLister(ns store.NS) lister {
	base := nsPath(ns)
	return func(ctx context.Context) ([]entry, error) {
		var es []entry
		children, err := f.childNamespaces(ns)
		if err != nil {
			return nil, err
		}
		if len(children) > 0 {
			es = append(es, f.listDir("ns", base+"ns", f.refresh, f.nsListLister(ns), f.started))
		}
		groups, err := f.s.Groups(ns)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for _, g := range groups {
			if !seen[g.Type] {
				seen[g.Type] = true
				es = append(es, f.listDir(g.Type, base+g.Type, f.refresh, f.typeLister(ns, g.Type), f.started))
			}
		}
		return es, nil
	}
}

// childNamespaces returns the names of ns's direct child namespaces.
func (f *mountFS) childNamespaces(ns store.NS) ([]string, error) {
	all, err := f.s.Namespaces(ns)
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
func (f *mountFS) nsListLister(ns store.NS) lister {
	return func(ctx context.Context) ([]entry, error) {
		children, err := f.childNamespaces(ns)
		if err != nil {
			return nil, err
		}
		es := make([]entry, 0, len(children))
		for _, c := range children {
			child := store.NS(c)
			if ns != "" {
				child = ns + "/" + child
			}
			es = append(es, f.listDir(c, strings.TrimSuffix(nsPath(child), "/"), f.refresh, f.nsLister(child), f.started))
		}
		return es, nil
	}
}

// typeLister lists the groups of one backup type in a namespace.
func (f *mountFS) typeLister(ns store.NS, typ string) lister {
	return func(ctx context.Context) ([]entry, error) {
		groups, err := f.s.Groups(ns)
		if err != nil {
			return nil, err
		}
		var es []entry
		for _, g := range groups {
			if g.Type == typ {
				es = append(es, f.groupEntry(g.ID, g))
			}
		}
		return es, nil
	}
}

// groupEntry is a group's directory: its finished snapshots and latest.
func (f *mountFS) groupEntry(name string, g store.Group) entry {
	attr := f.makeAttr(modeDir, inoOf(g.String()), 0, f.started)
	return entry{name: name, attr: attr, make: func(a fuse.Attr) gofs.InodeEmbedder { return f.newGroupDir(a, g) }}
}

func (f *mountFS) newGroupDir(attr fuse.Attr, g store.Group) *dir {
	return f.newDir(attr, g.String(), f.refresh, func(ctx context.Context) ([]entry, error) {
		return f.groupEntries(g)
	})
}

func (f *mountFS) groupEntries(g store.Group) ([]entry, error) {
	snaps, err := f.s.MountSnapshots(f.listIdx, g)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil // a forgotten group: empty (a group mount's root stays)
	}
	if err != nil {
		return nil, err
	}
	var es []entry
	var newest string
	for _, si := range snaps {
		if !si.Finished {
			continue
		}
		es = append(es, f.snapshotEntry(si.TimeString(), si.Snapshot, si.Stamp))
		newest = si.TimeString()
	}
	if newest != "" {
		// The kernel caches a symlink's target (FUSE_CACHE_SYMLINKS) per
		// inode: latest is a new inode when its target moves, so a lookup
		// after the move finds the new one with no cached target (and the
		// re-list drops the old entry, dir.forgetGone). So a node
		// answers the target its inode number was made for, never another.
		target := newest
		attr := f.makeAttr(modeLink, inoOf(g.String(), latestName, target), uint64(len(target)), f.started)
		es = append(es, entry{name: latestName, attr: attr, make: func(a fuse.Attr) gofs.InodeEmbedder {
			return &latestLink{node: node{fsys: f, attr: a}, target: target}
		}})
	}
	return es, nil
}

// snapshotEntry is a snapshot's directory; its content never changes.
// stamp is what the group's listing knew of its manifest.
func (f *mountFS) snapshotEntry(name string, snap store.Snapshot, stamp store.ManifestStamp) entry {
	return f.listDir(name, snap.String(), 0, f.snapshotLister(snap, stamp), snap.Time)
}

// latestLink points to the newest finished snapshot of its group, as the
// group's listing knew it when it made the node: a node's target never
// changes, because the kernel caches it (its inode number hashes it).
type latestLink struct {
	node
	readOnly
	target string
}

var _ gofs.NodeReadlinker = (*latestLink)(nil)

// Readlink returns the newest snapshot's directory name.
func (l *latestLink) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	return []byte(l.target), 0
}
