package walk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/cairnfs/cairn/internal/dirent"
	"github.com/cairnfs/cairn/store/pxar"
	"golang.org/x/sys/unix"
)

// Options tune a walk.
type Options struct {
	// Exclude holds gitignore-style patterns as PBS's --exclude takes
	// them; "!pattern" re-includes. .pxarexclude files add to them.
	Exclude []string
	// Select, if set, restricts the walk to its paths (and the
	// directories above them); patterns still leave out what they match.
	// Entries it leaves out count as Excluded.
	Select *Selection
	// AllFileSystems descends into directories of other file systems;
	// otherwise mount points are stored empty, as PBS does.
	AllFileSystems bool
	// OnError hears about entries that vanished or could not be read;
	// the walk skips them (or zero-fills unreadable content) and goes on.
	// Nil: they are only counted (Stats.Errors).
	OnError func(path string, err error)
	// File stores a regular file; nil copies its content into the
	// encoder. A hook may instead reference a previous backup's payload
	// (Encoder.AddFileRef). An error wrapping *pxar.ContentError is
	// reported and the walk goes on; any other error ends it.
	File FileFunc
	// Reuse, if set, is offered each regular file (not a repeated hard
	// link) before it is opened, with its lstat result. When it stores
	// the file itself, typically as a reference to a previous backup's
	// payload because size, times and inode show it unchanged, it returns
	// ok and the walk neither opens nor reads the file. An error ends the
	// walk.
	Reuse ReuseFunc
	// Finish, if set, is called after the last entry, before the archive
	// is closed (a File or Reuse hook may have payload to place yet).
	Finish func(ctx context.Context, enc *pxar.Encoder) error
	// ReadAhead tunes the helper that lists, stats and (for a walk
	// without Reuse, whose files are all read) reads files into the page
	// cache ahead of the walk. It changes nothing that is stored. With
	// Reuse it runs only if ReadAhead.StatAhead is set.
	ReadAhead ReadAhead
}

// Candidate is a regular file offered to a ReuseFunc, not yet opened.
type Candidate struct {
	Name string       // name in its directory
	Path string       // path relative to the walk root
	Stat *unix.Stat_t // lstat of the entry
}

// ReuseFunc may add c to enc without reading it; ok tells whether it did.
type ReuseFunc func(ctx context.Context, enc *pxar.Encoder, c *Candidate) (off pxar.LinkOffset, ok bool, err error)

// File is a regular file met by the walk, open for reading.
type File struct {
	Name string         // name in its directory
	Path string         // path relative to the walk root
	Meta *pxar.Metadata // its metadata, as it will be stored
	Stat *unix.Stat_t   // fstat of the open file
	F    Content        // its content; the walk closes it
}

// Content reads an open regular file: Read from its start, ReadAt
// without moving that position.
type Content interface {
	io.Reader
	io.ReaderAt
}

// FileFunc adds f to enc and returns its LinkOffset (for hard links).
type FileFunc func(ctx context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error)

// CopyFile is the default FileFunc: it reads the file into the archive.
func CopyFile(_ context.Context, enc *pxar.Encoder, f *File) (pxar.LinkOffset, error) {
	return enc.AddFile(f.Name, f.Meta, uint64(f.Stat.Size), f.F)
}

// Stats counts what a walk stored.
type Stats struct {
	Dirs, Files, Symlinks, Hardlinks, Specials uint64
	Bytes                                      uint64 // content bytes of regular files
	Reused                                     uint64 // regular files a ReuseFunc stored unread
	Excluded                                   uint64 // entries left out by patterns
	MountPoints                                uint64 // directories stored without contents
	Errors                                     uint64 // entries reported to OnError
}

type devIno struct{ dev, ino uint64 }

type link struct {
	path string
	off  pxar.LinkOffset
}

type walker struct {
	ctx       context.Context
	opts      Options
	enc       *pxar.Encoder
	stats     Stats
	patterns  patternList
	cli       []*pattern
	rootDev   uint64
	rootPath  string
	procFD    bool
	links     map[devIno]link
	direntBuf []byte
	ra        *readAhead // nil: no helper
}

// cliName is the file that records the command line patterns of a
// single-stream archive (split archives keep them in the prelude).
const cliName = ".pxarexclude-cli"

// Walk archives the directory tree at root in one pass into a new
// archive: split if payload is non-nil, else single-stream. Entries are
// stored sorted by name; symlinks are never followed.
func Walk(ctx context.Context, root string, meta, payload io.Writer, opts Options) (Stats, error) {
	w := &walker{ctx: ctx, opts: opts, rootPath: root, links: map[devIno]link{}}
	if w.opts.File == nil {
		w.opts.File = CopyFile
	}
	for _, s := range opts.Exclude {
		p, err := parsePattern(s)
		if err != nil {
			return w.stats, fmt.Errorf("exclude: %w", err)
		}
		w.cli = append(w.cli, p)
	}
	w.patterns = slices.Clone(patternList(w.cli))
	_, err := os.Stat("/proc/self/fd")
	w.procFD = err == nil

	fd, err := openNoatime(unix.AT_FDCWD, root, unix.O_DIRECTORY)
	if err != nil {
		return w.stats, fmt.Errorf("opening %s: %w", root, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return w.stats, fmt.Errorf("stat %s: %w", root, err)
	}
	if virtualFS(fd) {
		return w.stats, fmt.Errorf("%s: refusing to back up a virtual file system", root)
	}
	w.rootDev = st.Dev
	if !opts.ReadAhead.Off && (opts.Reuse == nil || opts.ReadAhead.StatAhead) {
		w.ra = startReadAhead(ctx, fd, st.Dev, w.cli, opts.Select, opts.Reuse == nil, opts.AllFileSystems, opts.ReadAhead)
		defer w.ra.stop()
	}
	rootMeta, err := readMetadata(&st, xattrSource{fd: fd}, fd)
	if err != nil {
		return w.stats, fmt.Errorf("%s: %w", root, err)
	}
	var encOpts []pxar.EncoderOption
	if payload != nil && len(w.cli) > 0 {
		encOpts = append(encOpts, pxar.WithPrelude(prelude(w.cli)))
	}
	w.enc, err = pxar.NewEncoder(meta, payload, &rootMeta, encOpts...)
	if err != nil {
		return w.stats, err
	}
	w.stats.Dirs++
	if err := w.dir(fd, ""); err != nil {
		return w.stats, err
	}
	if w.opts.Finish != nil {
		if err := w.opts.Finish(ctx, w.enc); err != nil {
			return w.stats, err
		}
	}
	return w.stats, w.enc.Close()
}

// prelude is PBS's PRELUDE JSON for the command line patterns.
func prelude(cli []*pattern) []byte {
	var b bytes.Buffer
	je := json.NewEncoder(&b)
	je.SetEscapeHTML(false)
	_ = je.Encode(struct {
		ExcludePatterns string `json:"exclude-patterns"`
	}{string(cliContent(cli))})
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func (w *walker) report(path string, err error) {
	w.stats.Errors++
	if w.opts.OnError != nil {
		w.opts.OnError(path, err)
	}
}

// openNoatime opens name without following a final symlink, with
// O_NOATIME where permitted.
func openNoatime(dirfd int, name string, flags int) (int, error) {
	flags |= unix.O_RDONLY | unix.O_CLOEXEC | unix.O_NOCTTY | unix.O_NOFOLLOW
	fd, err := unix.Openat(dirfd, name, flags|unix.O_NOATIME, 0)
	if errors.Is(err, unix.EPERM) {
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	return fd, err
}

// dir archives the entries of the open directory fd at path rel.
func (w *walker) dir(fd int, rel string) error {
	npat := len(w.patterns)
	defer func() { w.patterns = w.patterns[:npat] }()
	ents, err := dirent.Read(fd, &w.direntBuf)
	if err != nil {
		w.report(displayPath(rel), fmt.Errorf("listing directory: %w", err))
	}
	if slices.ContainsFunc(ents, func(e dirent.Entry) bool { return e.Name == ".pxarexclude" }) {
		w.readExcludes(fd, rel)
	}
	if rel == "" {
		ents = slices.DeleteFunc(ents, func(e dirent.Entry) bool { return e.Name == cliName })
		if !w.enc.Split() && len(w.cli) > 0 {
			ents = append(ents, dirent.Entry{Name: cliName})
		}
	}
	dirent.SortByName(ents) // the archive's order
	for _, e := range ents {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		if rel == "" && e.Name == cliName {
			if err := w.addCLIFile(); err != nil {
				return err
			}
			continue
		}
		if err := w.entry(fd, rel, e); err != nil {
			return err
		}
	}
	return nil
}

func displayPath(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// readExcludes adds the patterns of the directory's .pxarexclude file.
func (w *walker) readExcludes(dirfd int, rel string) {
	fd, err := openNoatime(dirfd, ".pxarexclude", 0)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
		return
	}
	path := join(rel, ".pxarexclude")
	if err != nil {
		w.report(path, err)
		return
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	dirPath := ""
	if rel != "" {
		dirPath = "/" + rel
	}
	pats, errs := readExcludeFile(f, dirPath)
	for _, err := range errs {
		w.report(path, err)
	}
	w.patterns = append(w.patterns, pats...)
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// addCLIFile stores the command line patterns as PBS does in single-stream
// archives.
func (w *walker) addCLIFile() error {
	content := cliContent(w.cli)
	m := pxar.Metadata{Stat: pxar.Stat{Mode: pxar.ModeIFREG | 0o600}}
	_, err := w.enc.AddFile(cliName, &m, uint64(len(content)), bytes.NewReader(content))
	w.stats.Files++
	return err
}

// virtualFS reports whether fd lies on a kernel pseudo file system whose
// contents PBS never archives.
func virtualFS(fd int) bool {
	var s unix.Statfs_t
	if unix.Fstatfs(fd, &s) != nil {
		return false
	}
	switch uint64(s.Type) {
	case unix.BINFMTFS_MAGIC, unix.CGROUP2_SUPER_MAGIC, unix.CGROUP_SUPER_MAGIC, 0x62656570, // configfs
		unix.DEBUGFS_MAGIC, unix.DEVPTS_SUPER_MAGIC, unix.EFIVARFS_MAGIC, 0x65735543, // fusectl
		unix.HUGETLBFS_MAGIC, 0x19800202 /* mqueue */, 0x6e667364 /* nfsd */, unix.PROC_SUPER_MAGIC,
		unix.PSTOREFS_MAGIC, 0x67596969, // rpc_pipefs
		unix.SECURITYFS_MAGIC, unix.SELINUX_MAGIC, unix.SMACK_MAGIC, unix.SYSFS_MAGIC:
		return true
	}
	return false
}

// pathSource is how xattrs of an entry without an open descriptor are
// read: through /proc/self/fd/<dir>/<name> when available (no long
// paths), else by its full path.
func (w *walker) pathSource(dirfd int, rel, name string) xattrSource {
	if w.procFD {
		return xattrSource{fd: -1, path: "/proc/self/fd/" + strconv.Itoa(dirfd) + "/" + name}
	}
	return xattrSource{fd: -1, path: w.rootPath + "/" + rel}
}
