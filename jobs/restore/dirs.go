package restore

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// Depth limits of a tree restore.
const (
	// maxDepth bounds how deep directories nest (the walk recurses once
	// per level); deeper ones are reported as failed paths.
	maxDepth = 4096
	// heldDepth is how many levels of directories keep their descriptor
	// open while a subdirectory is restored. Below it, a directory gives
	// its descriptor up and opens ".." of the subdirectory again
	// afterwards (checking that it is the same directory), so a deep tree
	// holds a bounded number of descriptors.
	heldDepth = 32
)

// errMoved is a restored directory that is no longer where the restore
// put it.
var errMoved = errors.New("directory moved or replaced during the restore")

// dirNode is a directory this restore created or restored into. Nodes
// record their identity (device and inode, checked whenever one is
// opened again) and their subdirectories by name, for entries of the
// same name later in the archive and for hard links, which are resolved
// through nodes, never through paths on disk.
type dirNode struct {
	parent   *dirNode
	name     string // the full target path for the root
	depth    int
	dev, ino uint64
	children map[string]*dirNode
	included bool // an include pattern selects it or a directory above it
}

// newDirNode records the directory open at fd as name in parent.
func newDirNode(parent *dirNode, name string, fd int) (*dirNode, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("stat: %w", err)
	}
	n := &dirNode{parent: parent, name: name, dev: st.Dev, ino: st.Ino}
	if parent != nil {
		n.depth = parent.depth + 1
		if parent.children == nil {
			parent.children = make(map[string]*dirNode)
		}
		parent.children[name] = n
	}
	return n, nil
}

// check reports whether fd is this node's directory.
func (n *dirNode) check(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	if st.Dev != n.dev || st.Ino != n.ino {
		return errMoved
	}
	return nil
}

// path is the target path of name in n (of n itself for ""), for
// messages only.
func (n *dirNode) path(name string) string {
	var parts []string
	if name != "" {
		parts = append(parts, name)
	}
	for ; n != nil; n = n.parent {
		parts = append(parts, n.name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// open opens n again, walking down from the root's descriptor rootFD one
// component at a time (never following a symbolic link) and checking
// each directory's identity.
func (n *dirNode) open(rootFD int) (int, error) {
	var chain []*dirNode
	for p := n; p.parent != nil; p = p.parent {
		chain = append(chain, p)
	}
	fd, err := unix.Dup(rootFD)
	if err != nil {
		return -1, err
	}
	for i := len(chain) - 1; i >= 0; i-- {
		next, err := openDirAt(fd, chain[i].name)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		if err := chain[i].check(next); err != nil {
			unix.Close(next)
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// mkdir makes (or, with Overwrite, reuses) the directory name in the
// directory fd of parent, and opens it. An existing name is only entered
// if it is a directory this restore made there (an archive listing a
// directory twice) or, with Overwrite, any directory; an existing
// non-directory is replaced with Overwrite and an error otherwise.
func (t *treeRestore) mkdir(parent *dirNode, fd int, name string) (int, *dirNode, error) {
	err := unix.Mkdirat(fd, name, 0o700)
	if err == unix.EEXIST {
		err = t.existingDir(parent, fd, name)
	}
	if err != nil {
		return -1, nil, err
	}
	cfd, err := openDirAt(fd, name)
	if err != nil {
		return -1, nil, fmt.Errorf("open: %w", err)
	}
	if old := parent.children[name]; old != nil {
		if err := old.check(cfd); err != nil {
			unix.Close(cfd)
			return -1, nil, err
		}
		return cfd, old, nil
	}
	n, err := newDirNode(parent, name, cfd)
	if err != nil {
		unix.Close(cfd)
		return -1, nil, err
	}
	return cfd, n, nil
}

// existingDir decides about a name that exists where a directory goes:
// nil to open and enter it, or an error.
func (t *treeRestore) existingDir(parent *dirNode, fd int, name string) error {
	if parent.children[name] != nil {
		return nil // made by this restore; mkdir checks it is still that one
	}
	if !t.opt.Overwrite {
		return fmt.Errorf("mkdir: %w (not made by this restore)", unix.EEXIST)
	}
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("stat: %w", err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil
	}
	if err := removeAt(fd, name); err != nil {
		return err
	}
	if err := unix.Mkdirat(fd, name, 0o700); err != nil {
		return fmt.Errorf("mkdir: %w", err)
	}
	return nil
}
