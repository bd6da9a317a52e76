package restore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/walk"
)

// Filter selects the entries of a tree restore by their path in the
// archive (relative to its root, whatever part is restored), with the
// gitignore-style patterns of backup's --exclude (walk.Patterns):
//
//   - An entry an exclude pattern matches is left out, and so is all of
//     a directory's subtree ("!" patterns re-include, the last matching
//     pattern decides; nothing below an excluded directory comes back).
//   - With include patterns, only entries one matches are restored, with
//     everything below a matched directory (excludes still apply), and
//     the directories on the way to them, created with their own
//     metadata from the archive.
//   - A hard link whose target is left out is restored as a copy of the
//     target's content (the link is what was asked for).
type Filter struct {
	include, exclude walk.Patterns
}

// NewFilter parses include and exclude patterns; an error names the
// pattern. No patterns give a nil Filter, which selects everything.
func NewFilter(include, exclude []string) (*Filter, error) {
	if len(include) == 0 && len(exclude) == 0 {
		return nil, nil
	}
	var f Filter
	var err error
	if f.include, err = walk.ParsePatterns(include); err != nil {
		return nil, fmt.Errorf("--include: %w", err)
	}
	if f.exclude, err = walk.ParsePatterns(exclude); err != nil {
		return nil, fmt.Errorf("--exclude: %w", err)
	}
	return &f, nil
}

func (f *Filter) excluded(path string, dir bool) bool {
	return f != nil && f.exclude.Match(path, dir)
}

// included reports whether an include pattern selects path itself (every
// path when there are none).
func (f *Filter) included(path string, dir bool) bool {
	return f == nil || f.include.Len() == 0 || f.include.Match(path, dir)
}

// Selects reports whether the filter restores the entry at path, a
// directory if dir, judging every directory above it too.
func (f *Filter) Selects(path string, dir bool) bool {
	return f == nil || (!f.excludedPath(path, dir) && f.includedPath(path, dir))
}

// prefixes calls fn with path and each directory above it, from the top,
// until fn returns true.
func prefixes(path string, dir bool, fn func(p string, dir bool) bool) bool {
	path = strings.Trim(path, "/")
	if path == "" {
		return false
	}
	comps := strings.Split(path, "/")
	for i := range comps {
		if fn(strings.Join(comps[:i+1], "/"), dir || i < len(comps)-1) {
			return true
		}
	}
	return false
}

// excludedPath reports whether path or a directory above it is excluded.
func (f *Filter) excludedPath(path string, dir bool) bool {
	return f != nil && prefixes(path, dir, f.excluded)
}

// includedPath reports whether path or a directory above it is included.
func (f *Filter) includedPath(path string, dir bool) bool {
	return f == nil || f.include.Len() == 0 || prefixes(path, dir, f.included)
}

// joinPath joins archive paths; "" is the root.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// archivePath is the path in the archive of name in node n.
func (t *treeRestore) archivePath(n *dirNode, name string) string {
	var parts []string
	if name != "" {
		parts = append(parts, name)
	}
	for ; n != nil && n.parent != nil; n = n.parent {
		parts = append(parts, n.name)
	}
	p := t.rootPath
	for i := len(parts) - 1; i >= 0; i-- {
		p = joinPath(p, parts[i])
	}
	return p
}

// choice is what the filter makes of one entry of a directory.
type choice int

const (
	skipEntry choice = iota
	restoreEntry
	enterDir // a directory on the way to included entries only
)

// choose decides about entry e of the directory node dir.
func (t *treeRestore) choose(e *pxar.Entry, dir *dirNode) (choice, string) {
	f := t.opt.Filter
	if f == nil {
		return restoreEntry, ""
	}
	isDir := e.Kind == pxar.KindDir
	p := t.archivePath(dir, e.Name)
	switch {
	case f.excluded(p, isDir):
		return skipEntry, p
	case dir.included || f.included(p, isDir):
		return restoreEntry, p
	case isDir && t.needed[p]:
		return enterDir, p
	}
	return skipEntry, p
}

// rootIncluded reports whether an include pattern selects the restored
// entry (at t.rootPath) or a directory above it.
func (t *treeRestore) rootIncluded(dir bool) bool {
	return t.opt.Filter.includedPath(t.rootPath, dir)
}

// findNeeded walks the metadata of directory d (at archive path p, not
// itself included) and records in t.needed every directory on the way to
// an entry the include patterns select; it reports whether d holds one.
// Excluded and included subtrees are not entered.
func (t *treeRestore) findNeeded(ctx context.Context, d *pxar.Entry, p string, depth int) (bool, error) {
	if depth > maxDepth {
		return false, nil // the restore reports it
	}
	r, err := t.acc.ReadDirSorted(ctx, d)
	if err != nil {
		t.needed[p] = true // enter it: the restore reports what cannot be read
		return true, nil
	}
	f, found := t.opt.Filter, false
	for {
		e, err := r.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return found, ctx.Err()
			}
			found = true // enter it: the restore reports what cannot be read
			break
		}
		isDir := e.Kind == pxar.KindDir
		cp := joinPath(p, e.Name)
		switch {
		case f.excluded(cp, isDir):
		case f.included(cp, isDir):
			found = true
		case isDir && e.ID <= t.lastNeeded:
			// a crafted archive's shared directory: the walk reports it
		case isDir:
			t.lastNeeded = e.ID
			sub, err := t.findNeeded(ctx, e, cp, depth+1)
			if err != nil {
				return found, err
			}
			found = found || sub
		}
	}
	if found {
		t.needed[p] = true
	}
	return found, nil
}
