package prune

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/store"
)

// checkRealGroupDir makes sure that every directory from the store's
// root down to g's is a directory of the store and not a symlink, so
// that removals in the group cannot follow a link out of the store
// (store.ForgetSnapshot refuses a symlinked snapshot directory, not a
// symlinked namespace, type or group directory above it).
func checkRealGroupDir(s *store.Store, g store.Group) error {
	root := filepath.Clean(s.Root())
	dir := s.GroupPath(g)
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return fmt.Errorf("group %s: directory %s is not below the store", g, dir)
	}
	p := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("group %s: %w", g, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("group %s: %s is a %s, not a directory: not pruned", g, p, fi.Mode().Type())
		}
	}
	return nil
}
