package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// Backup types.
const (
	TypeVM   = "vm"
	TypeCT   = "ct"
	TypeHost = "host"
)

// TimeFormat is the layout of a snapshot directory name.
const TimeFormat = "2006-01-02T15:04:05Z"

// MaxNSDepth is the deepest namespace nesting PBS allows.
const MaxNSDepth = 7

var (
	idRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._\-]*$`)
	nsRE   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._\-]*$`)
	timeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)
)

// NS is a namespace path such as "prod/db" ("" is the root namespace).
type NS string

// Parts returns the namespace's components.
func (n NS) Parts() []string {
	if n == "" {
		return nil
	}
	return strings.Split(string(n), "/")
}

// Check validates the namespace.
func (n NS) Check() error {
	parts := n.Parts()
	if len(parts) > MaxNSDepth {
		return fmt.Errorf("namespace %q: %w: deeper than %d", n, ErrBadName, MaxNSDepth)
	}
	for _, p := range parts {
		if !nsRE.MatchString(p) {
			return fmt.Errorf("namespace %q: %w: component %q", n, ErrBadName, p)
		}
	}
	return nil
}

// Rel is the namespace's directory relative to the store root.
func (n NS) Rel() string {
	var b strings.Builder
	for _, p := range n.Parts() {
		b.WriteString("ns/")
		b.WriteString(p)
		b.WriteByte('/')
	}
	return b.String()
}

// Group is a backup group: namespace, type and id.
type Group struct {
	NS   NS
	Type string
	ID   string
}

// Check validates the group's fields.
func (g Group) Check() error {
	if err := g.NS.Check(); err != nil {
		return err
	}
	switch g.Type {
	case TypeVM, TypeCT, TypeHost:
	default:
		return fmt.Errorf("backup type %q: %w: want vm, ct or host", g.Type, ErrBadName)
	}
	if !idRE.MatchString(g.ID) {
		return fmt.Errorf("backup id %q: %w", g.ID, ErrBadName)
	}
	return nil
}

// String returns the group as the command line names it.
func (g Group) String() string { return g.NS.Rel() + g.Type + "/" + g.ID }

// Snapshot is one backup of a group at a time (UTC, whole seconds).
type Snapshot struct {
	Group
	Time time.Time
}

// TimeString returns the snapshot directory name.
func (s Snapshot) TimeString() string { return s.Time.UTC().Format(TimeFormat) }

// String returns the snapshot as the command line names it.
func (s Snapshot) String() string { return s.Group.String() + "/" + s.TimeString() }

// GroupPath returns the group's directory.
func (s *Store) GroupPath(g Group) string {
	return filepath.Join(s.root, g.NS.Rel(), g.Type, g.ID)
}

// SnapshotPath returns the snapshot's directory.
func (s *Store) SnapshotPath(snap Snapshot) string {
	return filepath.Join(s.GroupPath(snap.Group), snap.TimeString())
}

// ParseTime parses a snapshot directory name.
func ParseTime(s string) (time.Time, error) {
	if !timeRE.MatchString(s) {
		return time.Time{}, fmt.Errorf("snapshot time %q: %w: want YYYY-MM-DDTHH:MM:SSZ", s, ErrBadName)
	}
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("snapshot time %q: %w: %v", s, ErrBadName, err)
	}
	return t, nil
}

// Ref is a parsed command-line snapshot reference. Latest is set for
// "TYPE/ID" and "TYPE/ID/latest".
type Ref struct {
	Snapshot
	Latest bool
}

// ParseRef parses "[ns/NAME/…]TYPE/ID[/TIME|/latest]".
func ParseRef(s string) (Ref, error) {
	parts := strings.Split(strings.Trim(s, "/"), "/")
	var ns []string
	for len(parts) >= 2 && parts[0] == "ns" {
		ns = append(ns, parts[1])
		parts = parts[2:]
	}
	var r Ref
	if len(parts) < 2 || len(parts) > 3 {
		return r, fmt.Errorf("snapshot %q: %w: want [ns/NAME/…]TYPE/ID[/TIME|latest]", s, ErrBadName)
	}
	r.Group = Group{NS: NS(strings.Join(ns, "/")), Type: parts[0], ID: parts[1]}
	if err := r.Group.Check(); err != nil {
		return r, fmt.Errorf("snapshot %q: %w", s, err)
	}
	if len(parts) == 2 || parts[2] == "latest" {
		r.Latest = true
		return r, nil
	}
	t, err := ParseTime(parts[2])
	if err != nil {
		return r, fmt.Errorf("snapshot %q: %w", s, err)
	}
	r.Time = t
	return r, nil
}

// SnapshotInfo describes one snapshot directory.
type SnapshotInfo struct {
	Snapshot
	Finished  bool // has a manifest
	Protected bool // carries the protection marker (ProtectedName)
	// manifest identifies the manifest file as Snapshots found it
	// (zero when not known): what the snapshot index checks its
	// entries against (snapindex.go).
	manifest fileKey
}

// Namespaces returns ns and every namespace below it, depth first, sorted.
func (s *Store) Namespaces(ns NS) ([]NS, error) {
	out := []NS{ns}
	dir := filepath.Join(s.root, ns.Rel(), "ns")
	names, err := fsutil.ReadNames(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return out, nil
		}
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	slices.Sort(names)
	for _, n := range names {
		if !nsRE.MatchString(n) {
			continue
		}
		child := NS(n)
		if ns != "" {
			child = ns + "/" + NS(n)
		}
		sub, err := s.Namespaces(child)
		if err != nil {
			return nil, err
		}
		out = append(out, sub...)
	}
	return out, nil
}

// Groups returns the groups of one namespace, sorted by type and id.
func (s *Store) Groups(ns NS) ([]Group, error) {
	var out []Group
	for _, typ := range []string{TypeCT, TypeHost, TypeVM} {
		names, err := fsutil.ReadNames(filepath.Join(s.root, ns.Rel(), typ))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list groups: %w", err)
		}
		slices.Sort(names)
		for _, id := range names {
			if idRE.MatchString(id) {
				out = append(out, Group{NS: ns, Type: typ, ID: id})
			}
		}
	}
	return out, nil
}

// Snapshots returns the group's snapshots, oldest first. Each costs two
// stats relative to the group's directory (its manifest, its protection
// marker), made in parallel (snapshot_stat.go).
func (s *Store) Snapshots(g Group) ([]SnapshotInfo, error) {
	dir, err := os.Open(s.GroupPath(g))
	if err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", g, notFound(err))
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", g, err)
	}
	slices.Sort(names)
	var out []SnapshotInfo
	var snapNames []string
	for _, n := range names {
		t, err := ParseTime(n)
		if err != nil {
			continue
		}
		out = append(out, SnapshotInfo{Snapshot: Snapshot{Group: g, Time: t}})
		snapNames = append(snapNames, n)
	}
	statSnapshots(int(dir.Fd()), snapNames, out)
	return out, nil
}

// fstatat is unix.Fstatat, retried on EINTR.
func fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	for {
		if err := unix.Fstatat(dirfd, path, st, flags); err != unix.EINTR {
			return err
		}
	}
}

// Latest returns the group's newest finished snapshot.
func (s *Store) Latest(g Group) (Snapshot, error) {
	snaps, err := s.Snapshots(g)
	if err != nil {
		return Snapshot{}, err
	}
	for i := len(snaps) - 1; i >= 0; i-- {
		if snaps[i].Finished {
			return snaps[i].Snapshot, nil
		}
	}
	if len(snaps) > 0 {
		return Snapshot{}, fmt.Errorf("group %s: %w: no finished snapshot: %w", g, ErrNotFound, ErrUnfinished)
	}
	return Snapshot{}, fmt.Errorf("group %s: %w: no finished snapshot", g, ErrNotFound)
}

// Resolve turns a Ref into a finished snapshot of the store.
func (s *Store) Resolve(r Ref) (Snapshot, error) {
	if r.Latest {
		return s.Latest(r.Group)
	}
	if _, err := os.Stat(filepath.Join(s.SnapshotPath(r.Snapshot), ManifestName)); err != nil {
		if _, derr := os.Stat(s.SnapshotPath(r.Snapshot)); derr == nil {
			return r.Snapshot, fmt.Errorf("snapshot %s: %w", r.Snapshot, ErrUnfinished)
		}
		return r.Snapshot, fmt.Errorf("snapshot %s: %w", r.Snapshot, ErrNotFound)
	}
	return r.Snapshot, nil
}

// HasNamespace reports whether namespace ns exists in the store (the root
// namespace always does).
func (s *Store) HasNamespace(ns NS) bool {
	if ns == "" {
		return true
	}
	fi, err := os.Stat(filepath.Join(s.root, ns.Rel()))
	return err == nil && fi.IsDir()
}
