package walk

import (
	"cmp"
	"slices"
	"strings"
)

// Selection restricts a walk to listed paths (restic's --files-from):
// each listed entry with everything below it, and the directories on
// the way to one (with their metadata, without their other entries).
// Paths are relative to the walk's root, cleaned, "/"-separated, without
// a leading "/"; "" is the root itself (everything). Lookups are binary
// searches of the sorted list: memory is the paths' bytes and about 40
// bytes a path, however large the tree.
type Selection struct {
	paths []SelectPath // sorted by Path, unique
	met   []bool       // paths[i] met by the walk (or left out by patterns)
}

// SelectPath is one listed path; Origin is the caller's (where it was
// listed), handed back by Unmet.
type SelectPath struct {
	Path   string
	Origin uint64
}

// NewSelection takes paths over (sorted in place); of a path listed
// twice the first keeps its origin.
func NewSelection(paths []SelectPath) *Selection {
	slices.SortStableFunc(paths, func(a, b SelectPath) int { return strings.Compare(a.Path, b.Path) })
	paths = slices.CompactFunc(paths, func(a, b SelectPath) bool { return a.Path == b.Path })
	return &Selection{paths: slices.Clip(paths), met: make([]bool, len(paths))}
}

// Len is the number of distinct paths.
func (s *Selection) Len() int { return len(s.paths) }

func (s *Selection) find(p string) (int, bool) {
	return slices.BinarySearchFunc(s.paths, p, func(e SelectPath, p string) int { return cmp.Compare(e.Path, p) })
}

// has tells whether the entry at rel (not the root) is selected: listed,
// below a listed path, or a directory above one. It only reads s (the
// read-ahead helper asks too, beside the walk).
func (s *Selection) has(rel string, isDir bool) bool {
	if isDir && s.above(rel) {
		return true
	}
	for p := rel; ; {
		if _, ok := s.find(p); ok {
			return true
		}
		if p == "" {
			return false
		}
		i := strings.LastIndexByte(p, '/')
		p = p[:max(i, 0)]
	}
}

// above tells whether a listed path lies below directory rel: those
// with the prefix rel+"/" are contiguous in the sorted list.
func (s *Selection) above(rel string) bool {
	prefix := rel + "/"
	i, _ := s.find(prefix)
	return i < len(s.paths) && strings.HasPrefix(s.paths[i].Path, prefix)
}

// take is has for the walk, which notes a listed path as met.
func (s *Selection) take(rel string, isDir bool) bool {
	if i, ok := s.find(rel); ok {
		s.met[i] = true
		return true
	}
	return s.has(rel, isDir)
}

// leftOut notes the listed paths below directory rel, which patterns
// leave out, as met: they are not missing.
func (s *Selection) leftOut(rel string) {
	prefix := rel + "/"
	i, _ := s.find(prefix)
	for ; i < len(s.paths) && strings.HasPrefix(s.paths[i].Path, prefix); i++ {
		s.met[i] = true
	}
}

// Unmet lists the first limit paths the walk did not meet, in path
// order (missing, or below a symbolic link, another file system or a
// directory that could not be read), and counts them all. The root ("")
// is always met.
func (s *Selection) Unmet(limit int) ([]SelectPath, int) {
	var out []SelectPath
	n := 0
	for i, p := range s.paths {
		if s.met[i] || p.Path == "" {
			continue
		}
		if n < limit {
			out = append(out, p)
		}
		n++
	}
	return out, n
}
