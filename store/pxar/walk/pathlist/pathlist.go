package pathlist

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/cairnfs/cairn/internal/userfile"
	"github.com/cairnfs/cairn/store/pxar/walk"
)

// UsageError is a list that cannot be used as it is given: the command
// line's fault, not the machine's.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErr(format string, args ...any) error { return &UsageError{fmt.Errorf(format, args...)} }

// Bounds of the lists: a line (a path) and, over every list, the paths
// and their bytes. Memory is the lists' paths and about 40 bytes a path.
const (
	maxListLine  = 64 << 10
	maxListPaths = 10_000_000
	maxListBytes = 1 << 30
)

// Format is how a list is read.
type Format int

const (
	Lines    Format = iota // --files-from: trimmed, # comments, globs
	Verbatim               // --files-from-verbatim: each line as it is
	Raw                    // --files-from-raw: NUL-separated, as they are
)

// List is one list a flag names ("-": standard input).
type List struct {
	Flag, Name string
	Format     Format
}

func (l List) String() string { return l.Flag + " " + termsafe.Quote(l.Name) }

// unit names an entry of the list in messages.
func (l List) unit() string {
	if l.Format == Raw {
		return "entry"
	}
	return "line"
}

// Selection is what the lists select in a tree: the selection the walk
// takes (Select), the lists (an origin names one: its index << 32 |
// line) and the warnings of patterns that matched nothing.
type Selection struct {
	Select *walk.Selection
	lists  []List
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

// Read reads every list for the tree at dir; stdin is what "-" reads,
// nil when an archive reads standard input. A list that cannot be used as
// given is a *UsageError.
func Read(lists []List, dir string, stdin io.Reader) (*Selection, error) {
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
		if l.Name == "-" {
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
	return &Selection{Select: walk.NewSelection(p.paths), lists: lists, dir: dir, misses: p.misses}, nil
}

// readFile opens a list without blocking (a FIFO is refused, a pipe
// such as <(find …) taken).
func (p *listParser) readFile(l List, i int) error {
	f, _, err := userfile.Open(l.Name, userfile.Pipe)
	if err != nil {
		return &UsageError{fmt.Errorf("%s: %w", l.Flag, err)}
	}
	defer f.Close()
	return p.read(f, l, i)
}

func (p *listParser) read(r io.Reader, l List, i int) error {
	sep := byte('\n')
	if l.Format == Raw {
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
func (p *listParser) line(line []byte, l List, origin uint64) error {
	n := origin & (1<<32 - 1)
	if l.Format != Raw && bytes.IndexByte(line, 0) >= 0 {
		return usageErr("%s line %d holds a NUL byte (NUL-separated lists are read with --files-from-raw)", l, n)
	}
	s := string(line)
	if l.Format == Lines {
		s = strings.TrimSpace(s)
		if strings.HasPrefix(s, "#") {
			return nil
		}
	}
	if s == "" {
		return nil
	}
	if l.Format == Lines && strings.ContainsAny(s, "*?[") {
		return p.glob(s, l, origin)
	}
	return p.add(s, l, origin)
}

// glob adds the paths a pattern of --files-from matches (restic expands
// them so); one that matches nothing is a warning.
func (p *listParser) glob(pat string, l List, origin uint64) error {
	n := origin & (1<<32 - 1)
	full := pat
	if !filepath.IsAbs(pat) {
		full = filepath.Join(p.dir, pat)
	}
	matches, err := filepath.Glob(full)
	if err != nil {
		return &UsageError{fmt.Errorf("%s line %d: pattern %s: %w", l, n, termsafe.Quote(pat), err)}
	}
	if len(matches) == 0 {
		p.misses = append(p.misses, fmt.Sprintf("%s line %d: pattern %s matches nothing", l, n, termsafe.Quote(pat)))
	}
	for _, m := range matches {
		if err := p.add(m, l, origin); err != nil {
			return err
		}
	}
	return nil
}

// add adds path, relative to the tree's directory or absolute inside it.
func (p *listParser) add(path string, l List, origin uint64) error {
	n := origin & (1<<32 - 1)
	rel, ok := p.relative(path)
	if !ok {
		return usageErr("%s %s %d: %s is outside %s (a path is relative to the tree's directory, or absolute inside it)",
			l, l.unit(), n, termsafe.Quote(path), termsafe.Quote(p.dir))
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

// Warn reports, as the backup's warnings, the patterns that matched
// nothing and the listed paths the walk of the tree (archive name) did
// not meet, at most maxWarnings of them; it returns how many there were.
func (ls *Selection) Warn(w io.Writer, name string) int64 {
	unmet, n := ls.Select.Unmet(maxWarnings)
	for _, u := range unmet {
		l := ls.lists[u.Origin>>32]
		fmt.Fprintf(w, "cairn: warning: %s: %s %s %d: %s: %s\n", name, l, l.unit(), u.Origin&(1<<32-1),
			termsafe.Quote(u.Path), ls.whyUnmet(u.Path))
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
func (ls *Selection) whyUnmet(rel string) string {
	_, err := os.Lstat(filepath.Join(ls.dir, rel))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "not found: not backed up"
	case err != nil:
		return fmt.Sprintf("not backed up: %v", err)
	}
	return "not backed up: below a symbolic link (never followed), another file system or a directory that could not be read"
}
