package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cairnfs/cairn/internal/userfile"
	"github.com/cairnfs/cairn/store/backupsrc"
	"github.com/cairnfs/cairn/store/pxar/walk/pathlist"
	"github.com/spf13/pflag"
)

// pxarOpts are the backup flags of file archives (NAME.pxar:DIR).
type pxarOpts struct {
	exclude      []string
	excludeFiles []string
	allFS        bool
	mode         string
	// --files-from and its kin (files_from.go)
	filesFrom, filesFromVerbatim, filesFromRaw []string
}

func (o *pxarOpts) flags(f *pflag.FlagSet) {
	f.StringArrayVar(&o.exclude, "exclude", nil, "leave out paths matching this gitignore-style pattern (file archives; repeatable)")
	f.StringArrayVar(&o.excludeFiles, "exclude-file", nil, "read --exclude patterns from this file, one a line (# comments and blank lines skipped; repeatable; restic's --exclude-file)")
	f.StringArrayVar(&o.filesFrom, "files-from", nil, "back up only the paths this file lists, one a line, in the directory tree (relative to its DIR or absolute inside it; # comments, blank lines skipped, spaces trimmed, globs expanded; - reads standard input; repeatable; restic's)")
	f.StringArrayVar(&o.filesFromVerbatim, "files-from-verbatim", nil, "as --files-from, each line a path as it is (no comments, trimming or globs)")
	f.StringArrayVar(&o.filesFromRaw, "files-from-raw", nil, "as --files-from-verbatim, the paths separated by NUL bytes (find -print0)")
	f.BoolVar(&o.allFS, "all-file-systems", false, "descend into other file systems mounted below a directory tree")
	f.StringVar(&o.mode, "change-detection-mode", "", "legacy, data or metadata (default: metadata when the archive has a reference, the group's newest snapshot that has it, else data)")
}

// maxExcludeFile bounds an --exclude-file.
const maxExcludeFile = 1 << 20

// patterns is --exclude and the patterns of every --exclude-file: one a
// line, blank lines and lines starting with # skipped, trailing spaces
// and a CR kept off (a file written on Windows). The file is opened
// without blocking (a FIFO is refused) and read up to 1 MiB.
func (o *pxarOpts) patterns() ([]string, error) {
	out := slices.Clone(o.exclude)
	for _, name := range o.excludeFiles {
		data, err := userfile.Read(name, maxExcludeFile, userfile.Pipe)
		if err != nil {
			return nil, fmt.Errorf("--exclude-file: %w", err)
		}
		for n, line := range strings.Split(string(data), "\n") {
			line = strings.TrimRight(line, " \t\r")
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if strings.ContainsRune(line, 0) {
				return nil, fmt.Errorf("--exclude-file %s: line %d holds a NUL byte", name, n+1)
			}
			out = append(out, line)
		}
	}
	return out, nil
}

// lists are the lists of --files-from and its kin.
func (o *pxarOpts) lists() []pathlist.List {
	var out []pathlist.List
	for _, f := range []struct {
		flag   string
		names  []string
		format pathlist.Format
	}{{"--files-from", o.filesFrom, pathlist.Lines}, {"--files-from-verbatim", o.filesFromVerbatim, pathlist.Verbatim},
		{"--files-from-raw", o.filesFromRaw, pathlist.Raw}} {
		for _, n := range f.names {
			out = append(out, pathlist.List{Flag: f.flag, Name: n, Format: f.format})
		}
	}
	return out
}

// backupSelection reads the lists of --files-from and its kin for the
// one directory tree of specs; nil when none is given.
func (a *app) backupSelection(o *pxarOpts, specs []backupsrc.Spec) (*pathlist.Selection, error) {
	lists := o.lists()
	if len(lists) == 0 {
		return nil, nil
	}
	trees := slices.DeleteFunc(slices.Clone(specs), func(sp backupsrc.Spec) bool { return !sp.IsPxar() })
	if len(trees) != 1 {
		return nil, usageErr("%s selects the paths of one directory tree: give one NAME.pxar:DIR (%d given)", lists[0].Flag, len(trees))
	}
	stdin := a.stdin
	if slices.ContainsFunc(specs, backupsrc.Spec.IsStdin) {
		stdin = nil
	}
	sel, err := pathlist.Read(lists, trees[0].Path, stdin)
	if ue := (*pathlist.UsageError)(nil); errors.As(err, &ue) {
		err = fmt.Errorf("%w: %w", errUsage, err)
	}
	return sel, err
}
