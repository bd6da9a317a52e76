package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// entry is one line of a manifest: what a restore or a listing through a
// mount must reproduce. Owners and times are left out (the mounts show
// them differently); directories and symlinks have no size, symlinks no
// mode (Linux ignores it).
type entry struct {
	path, typ string
	mode      fs.FileMode
	size      int64
	sum, link string
}

func (e entry) String() string {
	return fmt.Sprintf("%s\t%s\t%04o\t%d\t%s\t%s", e.path, e.typ, uint32(e.mode), e.size, e.sum, e.link)
}

func printManifest(es []entry) {
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	for _, e := range es {
		fmt.Println(e)
	}
}

func sumOf(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// perm is the permission bits of a file's st_mode (with setuid, setgid
// and sticky), as in a tar header's mode.
func perm(fi fs.FileInfo) fs.FileMode {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return fs.FileMode(st.Mode & 0o7777)
	}
	return fi.Mode().Perm()
}

func cmdManifest(args []string) error {
	if len(args) != 1 {
		return errors.New("manifest DIR")
	}
	es, err := treeManifest(args[0])
	if err != nil {
		return err
	}
	printManifest(es)
	return nil
}

// treeManifest is the manifest of the tree below root (root left out).
func treeManifest(root string) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e := entry{path: rel, mode: perm(fi)}
		switch m := fi.Mode(); {
		case m.IsDir():
			e.typ = "d"
		case m.IsRegular():
			e.typ, e.size = "f", fi.Size()
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			e.sum, err = sumOf(f)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
		case m&fs.ModeSymlink != 0:
			e.typ, e.mode = "l", 0
			if e.link, err = os.Readlink(p); err != nil {
				return err
			}
		default:
			e.typ = "o" + m.Type().String()
		}
		es = append(es, e)
		return nil
	})
	return es, err
}

func cmdTarManifest(args []string) error {
	if len(args) != 1 {
		return errors.New("tarmanifest FILE")
	}
	f, err := os.Open(args[0])
	if err != nil {
		return err
	}
	defer f.Close()
	es, err := tarManifest(f)
	if err != nil {
		return err
	}
	printManifest(es)
	return nil
}

// tarManifest is the manifest of a tar stream (its "." left out).
func tarManifest(r io.Reader) ([]entry, error) {
	tr := tar.NewReader(r)
	var es []entry
	byPath := map[string]entry{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(strings.TrimPrefix(h.Name, "./"), "/")
		if name == "." || name == "" {
			continue
		}
		e := entry{path: name, mode: fs.FileMode(h.Mode & 0o7777)}
		switch h.Typeflag {
		case tar.TypeDir:
			e.typ = "d"
		case tar.TypeReg:
			e.typ, e.size = "f", h.Size
			if e.sum, err = sumOf(tr); err != nil {
				return nil, err
			}
		case tar.TypeLink: // a hard link: the content of the entry it names
			t, ok := byPath[strings.TrimSuffix(strings.TrimPrefix(h.Linkname, "./"), "/")]
			if !ok {
				return nil, fmt.Errorf("%s: hard link to unknown %s", name, h.Linkname)
			}
			e.typ, e.size, e.sum = "f", t.size, t.sum
		case tar.TypeSymlink:
			e.typ, e.mode, e.link = "l", 0, h.Linkname
		default:
			e.typ = fmt.Sprintf("o%c", h.Typeflag)
		}
		byPath[name] = e
		es = append(es, e)
	}
	return es, nil
}

// cmdRandCmp reads n random 4 KiB blocks of a (with O_DIRECT unless the
// file system refuses it) and compares them with the same blocks of b.
func cmdRandCmp(args []string) error {
	fs := flag.NewFlagSet("randcmp", flag.ExitOnError)
	n := fs.Int("n", 2000, "blocks")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return errors.New("randcmp [-n N] A B")
	}
	fa, err := os.OpenFile(fs.Arg(0), os.O_RDONLY|syscall.O_DIRECT, 0)
	if errors.Is(err, syscall.EINVAL) {
		fa, err = os.Open(fs.Arg(0))
	}
	if err != nil {
		return err
	}
	defer fa.Close()
	fb, err := os.Open(fs.Arg(1))
	if err != nil {
		return err
	}
	defer fb.Close()
	fi, err := fb.Stat()
	if err != nil {
		return err
	}
	blocks := fi.Size() / 4096
	if blocks == 0 {
		return errors.New("randcmp: B is smaller than a block")
	}
	// O_DIRECT wants an aligned buffer: take a 4 KiB-aligned slice.
	raw := make([]byte, 2*4096)
	off := 4096 - int(uintptrOf(raw)%4096)
	bufA, bufB := raw[off:off+4096], make([]byte, 4096)
	for i := 0; i < *n; i++ {
		at := rand.Int64N(blocks) * 4096
		if _, err := fa.ReadAt(bufA, at); err != nil {
			return fmt.Errorf("read %s at %d: %w", fs.Arg(0), at, err)
		}
		if _, err := fb.ReadAt(bufB, at); err != nil {
			return fmt.Errorf("read %s at %d: %w", fs.Arg(1), at, err)
		}
		if string(bufA) != string(bufB) {
			return fmt.Errorf("randcmp: block at %d differs", at)
		}
	}
	fmt.Printf("randcmp: %d random blocks equal\n", *n)
	return nil
}
