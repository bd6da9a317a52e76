package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/internal/userfile"
	"github.com/cairnfs/cairn/store/pxar/walk"
)

// --files-from, --files-from-verbatim and --files-from-raw (restic's
// flags) restrict the one directory tree of a backup to the paths they
// list: each with everything below it, and the directories on the way to
// it. A path is relative to the tree's DIR, or absolute inside it.

// Bounds of the lists: a line (a path) and, over every list, the paths
// and their bytes. Memory is the lists' paths and about 40 bytes a path.
const (
	maxListLine  = 64 << 10
	maxListPaths = 10_000_000
	maxListBytes = 1 << 30
)

// listFormat is how a list is read.
type listFormat int

const (
	listLines    listFormat = iota // --files-from: trimmed, # comments, globs
	listVerbatim                   // --files-from-verbatim: each line as it is
	listRaw                        // --files-from-raw: NUL-separated, as they are
)

// listFile is one list a flag names ("-": standard input).
type listFile struct {
	flag, name string
	format     listFormat
}

func (l listFile) String() string { return l.flag + " " + quoteName(l.name) }

// unit names an entry of the list in messages.
func (l listFile) unit() string {
	if l.format == listRaw {
		return "entry"
	}
	return "line"
}

func (o *pxarOpts) lists() []listFile {
	var out []listFile
	for _, f := range []struct {
		flag   string
		names  []string
		format listFormat
	}{{"--files-from", o.filesFrom, listLines}, {"--files-from-verbatim", o.filesFromVerbatim, listVerbatim},
		{"--files-from-raw", o.filesFromRaw, listRaw}} {
		for _, n := range f.names {
			out = append(out, listFile{f.flag, n, f.format})
		}
	}
	return out
}

// listSelection is what the lists select in a tree: the selection, the
// lists (an origin names one: its index << 32 | line) and the warnings
// of patterns that matched nothing.
type listSelection struct {
	sel    *walk.Selection
	lists  []listFile
	dir    string
	misses []string
}

// listParser reads the lists of the tree at dir.
type listParser struct {
	dir, real string // DIR made absolute, and with its symbolic links resolved
	paths     []walk.SelectPath
	bytes     int64
	misses    []string
}

// readSelection reads every list of o for the tree at dir; stdin is
// what "-" reads, nil when an archive reads standard input.
func readSelection(o *pxarOpts, dir string, stdin io.Reader) (*listSelection, error) {
	lists := o.lists()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", lists[0], err)
	}
	p := &listParser{dir: abs, real: abs}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		p.real = r
	}
	stdinUsed := false
	for i, l := range lists {
		if l.name == "-" {
			if stdin == nil || stdinUsed {
				return nil, usageErr("%s: standard input is read by an archive or another list already", l)
			}
			stdinUsed = true
			err = p.read(stdin, l, i)
		} else {
			err = p.readFile(l, i)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(p.paths) == 0 {
		return nil, usageErr("%s: no path listed: nothing would be backed up", lists[0])
	}
	return &listSelection{sel: walk.NewSelection(p.paths), lists: lists, dir: dir, misses: p.misses}, nil
}

// readFile opens a list without blocking (a FIFO is refused, a pipe
// such as <(find …) taken).
func (p *listParser) readFile(l listFile, i int) error {
	f, _, err := userfile.Open(l.name, userfile.Pipe)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errUsage, l.flag, err)
	}
	defer f.Close()
	return p.read(f, l, i)
}

func (p *listParser) read(r io.Reader, l listFile, i int) error {
	sep := byte('\n')
	if l.format == listRaw {
		sep = 0
	}
	br := bufio.NewReaderSize(r, maxListLine+1)
	for n := 1; ; n++ {
		line, err := br.ReadSlice(sep)
		if errors.Is(err, bufio.ErrBufferFull) {
			return usageErr("%s %s %d: longer than %d KiB: not a path", l, l.unit(), n, maxListLine>>10)
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: %w", l, err)
		}
		if len(line) > 0 && line[len(line)-1] == sep {
			line = line[:len(line)-1]
		}
		if perr := p.line(line, l, uint64(i)<<32|uint64(n)); perr != nil {
			return perr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// line adds the path of one line (origin: where it was listed).
func (p *listParser) line(line []byte, l listFile, origin uint64) error {
	n := origin & (1<<32 - 1)
	if l.format != listRaw && bytes.IndexByte(line, 0) >= 0 {
		return usageErr("%s line %d holds a NUL byte (NUL-separated lists are read with --files-from-raw)", l, n)
	}
	s := string(line)
	if l.format == listLines {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "#") {
			return nil
		}
	}
	if s == "" {
		return nil
	}
	if l.format == listLines && strings.ContainsAny(s, "*?[") {
		return p.glob(s, l, origin)
	}
	return p.add(s, l, origin)
}

// glob adds the paths a pattern of --files-from matches (restic expands
// them so); one that matches nothing is a warning.
func (p *listParser) glob(pat string, l listFile, origin uint64) error {
	n := origin & (1<<32 - 1)
	full := pat
	if !filepath.IsAbs(pat) {
		full = filepath.Join(p.dir, pat)
	}
	matches, err := filepath.Glob(full)
	if err != nil {
		return fmt.Errorf("%w: %s line %d: pattern %s: %w", errUsage, l, n, quoteName(pat), err)
	}
	if len(matches) == 0 {
		p.misses = append(p.misses, fmt.Sprintf("%s line %d: pattern %s matches nothing", l, n, quoteName(pat)))
	}
	for _, m := range matches {
		if err := p.add(m, l, origin); err != nil {
			return err
		}
	}
	return nil
}

// add adds path, relative to the tree's directory or absolute inside it.
func (p *listParser) add(path string, l listFile, origin uint64) error {
	n := origin & (1<<32 - 1)
	rel, ok := p.relative(path)
	if !ok {
		return usageErr("%s %s %d: %s is outside %s (a path is relative to the tree's directory, or absolute inside it)",
			l, l.unit(), n, quoteName(path), quoteName(p.dir))
	}
	p.bytes += int64(len(rel))
	if len(p.paths) >= maxListPaths || p.bytes > maxListBytes {
		return usageErr("%s: more than %d paths or %d GiB of them listed", l, maxListPaths, maxListBytes>>30)
	}
	p.paths = append(p.paths, walk.SelectPath{Path: rel, Origin: origin})
	return nil
}

// relative makes path relative to the tree's directory ("" for the
// directory itself), lexically (no symbolic link is followed: the
// backup follows none); ok is false outside it.
func (p *listParser) relative(path string) (string, bool) {
	if !filepath.IsAbs(path) {
		rel := filepath.Clean(path)
		switch {
		case rel == ".." || strings.HasPrefix(rel, "../"):
			return "", false
		case rel == ".":
			return "", true
		}
		return rel, true
	}
	path = filepath.Clean(path)
	for _, d := range []string{p.dir, p.real} {
		if path == d {
			return "", true
		}
		if rel, ok := strings.CutPrefix(path, strings.TrimSuffix(d, "/")+"/"); ok {
			return rel, true
		}
	}
	return "", false
}

// warn reports, as the backup's warnings, the patterns that matched
// nothing and the listed paths the walk of the tree (archive name) did
// not meet, at most maxWarnings of them; it returns how many there were.
func (ls *listSelection) warn(w io.Writer, name string) int64 {
	unmet, n := ls.sel.Unmet(maxWarnings)
	for _, u := range unmet {
		l := ls.lists[u.Origin>>32]
		fmt.Fprintf(w, "cairn: warning: %s: %s %s %d: %s: %s\n", name, l, l.unit(), u.Origin&(1<<32-1),
			quoteName(u.Path), ls.whyUnmet(u.Path))
	}
	if n > len(unmet) {
		fmt.Fprintf(w, "cairn: warning: %s: %d more listed paths not backed up\n", name, n-len(unmet))
	}
	for _, m := range ls.misses {
		fmt.Fprintf(w, "cairn: warning: %s: %s\n", name, m)
	}
	return int64(n + len(ls.misses))
}

// maxWarnings bounds the unmet paths named one by one.
const maxWarnings = 1000

// whyUnmet tells why the walk did not meet a listed path.
func (ls *listSelection) whyUnmet(rel string) string {
	_, err := os.Lstat(filepath.Join(ls.dir, rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "not found: not backed up"
	case err != nil:
		return fmt.Sprintf("not backed up: %v", err)
	}
	return "not backed up: below a symbolic link (never followed), another file system or a directory that could not be read"
}

// backupSelection reads the lists of --files-from and its kin for the
// one directory tree of specs; nil when none is given.
func (a *app) backupSelection(o *pxarOpts, specs []backupSpec) (*listSelection, error) {
	lists := o.lists()
	if len(lists) == 0 {
		return nil, nil
	}
	trees := slices.DeleteFunc(slices.Clone(specs), func(sp backupSpec) bool { return !sp.isPxar() })
	if len(trees) != 1 {
		return nil, usageErr("%s selects the paths of one directory tree: give one NAME.pxar:DIR (%d given)", lists[0].flag, len(trees))
	}
	stdin := a.stdin
	if slices.ContainsFunc(specs, backupSpec.isStdin) {
		stdin = nil
	}
	return readSelection(o, trees[0].path, stdin)
}
