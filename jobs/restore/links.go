package restore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// errLinkRefused is a hard link the restore will not make.
var errLinkRefused = errors.New("hard link refused")

// hardlink restores hard link e as name in the directory node dir (open
// at fd). Its target is found by its place in the archive: the path the
// link records must name, in the archive and through directories only,
// exactly the file the link points to (e.ID). If that file lies in the
// restored tree it was restored earlier in this run (targets precede
// their links in the stream), and the link is made with linkat between
// descriptors, through the directory nodes this restore made; if it lies
// outside the restored subtree or left out by the filter, a copy is
// restored. Anything else, a path
// through a symbolic link, "..", an absolute path, or a target that was
// not restored, is refused for this path: nothing on disk is followed.
func (t *treeRestore) hardlink(ctx context.Context, e *pxar.Entry, name string, dir *dirNode, fd int, files *fileQueue) error {
	comps, err := linkComponents(e.Hardlink)
	if err != nil {
		return err
	}
	target, err := t.acc.LookupPath(ctx, strings.Join(comps, "/"))
	if err != nil {
		return fmt.Errorf("%w: target %q: %w", errLinkRefused, e.Hardlink, err)
	}
	if target.ID != e.ID || target.Kind != pxar.KindFile {
		return fmt.Errorf("%w: target %q is not the file the link points to", errLinkRefused, e.Hardlink)
	}
	rel, inside := t.relative(comps)
	if !inside || !t.opt.Filter.Selects(strings.Join(comps, "/"), false) {
		return t.createFile(ctx, e, name, dir, fd, files) // a copy
	}
	t.mu.Lock()
	failed := t.failedFiles[e.ID]
	t.mu.Unlock()
	if failed {
		return fmt.Errorf("%w: target %q was not restored", errLinkRefused, e.Hardlink)
	}
	node := t.root
	for _, c := range rel[:len(rel)-1] {
		if node = node.children[c]; node == nil {
			return fmt.Errorf("%w: target %q was not restored", errLinkRefused, e.Hardlink)
		}
	}
	from := fd
	if node != dir {
		if from, err = node.open(t.rootFD); err != nil {
			return fmt.Errorf("%w: open the directory of %q: %w", errLinkRefused, e.Hardlink, err)
		}
		defer unix.Close(from)
	}
	// Without AT_SYMLINK_FOLLOW: a symbolic link is linked, not followed.
	if err := unix.Linkat(from, rel[len(rel)-1], fd, name, 0); err != nil {
		return fmt.Errorf("link to %q: %w", e.Hardlink, err)
	}
	t.count(func(r *TreeReport) { r.Files++ })
	return nil
}

// linkComponents splits a recorded hard link target into its names,
// refusing absolute paths, empty, "." and ".." components.
func linkComponents(p string) ([]string, error) {
	if p == "" || strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("%w: target %q is not relative to the archive root", errLinkRefused, p)
	}
	comps := strings.Split(p, "/")
	for _, c := range comps {
		if !pxar.ValidName(c) {
			return nil, fmt.Errorf("%w: target %q has the component %q", errLinkRefused, p, c)
		}
	}
	return comps, nil
}

// relative returns the components of an archive path below the restored
// entry, and whether it lies there.
func (t *treeRestore) relative(comps []string) ([]string, bool) {
	if t.rootPath == "" {
		return comps, true
	}
	var root []string
	for _, c := range strings.Split(t.rootPath, "/") {
		if c != "" && c != "." {
			root = append(root, c)
		}
	}
	if len(comps) <= len(root) {
		return nil, false
	}
	for i, c := range root {
		if comps[i] != c {
			return nil, false
		}
	}
	return comps[len(root):], true
}
