package filearchive

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/pxar/walk"
	"golang.org/x/sys/unix"
)

// Mode is the change detection mode, as PBS names them.
type Mode int

// Change detection modes.
const (
	// ModeAuto is metadata when the previous snapshot of the group has
	// the archive as a split archive, else data.
	ModeAuto Mode = iota
	// ModeLegacy writes a single-stream NAME.pxar.didx; every file is read.
	ModeLegacy
	// ModeData writes a split archive; every file is read.
	ModeData
	// ModeMetadata writes a split archive and references unchanged files
	// in the previous snapshot's payload.
	ModeMetadata
)

var modeNames = [...]string{ModeAuto: "auto", ModeLegacy: "legacy", ModeData: "data", ModeMetadata: "metadata"}

func (m Mode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("mode(%d)", int(m))
}

// ParseMode parses legacy, data, metadata or auto ("" is auto).
func ParseMode(s string) (Mode, error) {
	for m, n := range modeNames {
		if s == n {
			return Mode(m), nil
		}
	}
	if s == "" {
		return ModeAuto, nil
	}
	return 0, fmt.Errorf("change detection mode %q: want legacy, data or metadata", s)
}

// Options tune AddArchive.
type Options struct {
	Mode           Mode
	Exclude        []string        // gitignore-style patterns, as walk.Options.Exclude
	Select         *walk.Selection // restricts the tree to its paths, as walk.Options.Select
	AllFileSystems bool
	// OnError hears about entries that vanished or could not be read; the
	// backup goes on without them (or with their content zero-filled).
	// Nil logs them.
	OnError func(path string, err error)
	// Logger hears the warnings that are no entry's (a previous archive
	// not usable); nil means the store's.
	Logger    *slog.Logger
	ChunkSize int                // buzhash average of all streams; default 4 MiB
	Workers   int                // hash/compress workers per stream; default NumCPU
	Stats     *store.UploadStats // upload counters, shared by the streams
	// Progress, if set, counts what is stored so far, for a display.
	Progress *Progress
	// CacheSize bounds the chunk cache used to read the previous archive;
	// default 16 MiB (prevCacheSize).
	CacheSize int64
	// MaxPadding bounds the bytes of reused payload chunks that no file
	// of the snapshot uses, as a share of those the files use (see
	// reusePlan); past it the least used chunks are not reused and their
	// files are read again. Default DefaultMaxPadding; negative: no bound.
	MaxPadding float64
	// ReadAhead tunes the walk's helper that lists, stats and reads
	// files ahead of it (walk.ReadAhead); it never changes the archive.
	ReadAhead walk.ReadAhead

	racyMargin time.Duration     // tests: see statTable; default 2 s
	onRead     func(path string) // tests: a file's content is being read
	runFiles   int               // tests: files of a run before it is split; default maxRunFiles
	digests    int               // tests: 1 keeps digests on any store, -1 on none; 0: keepDigests
}

// Result is what AddArchive did.
type Result struct {
	Mode     Mode   // the mode used (auto resolved)
	Previous string // snapshot whose archive was the reference (store.Backup.Reference), if any
	Walk     walk.Stats
	// Errors counts every entry reported to OnError (Walk.Errors and
	// files that failed when read again).
	Errors int64
	// Files whose content was read, and their bytes.
	ReadFiles, ReadBytes int64
	// Files referenced in the previous payload without being stored
	// anew, and their content bytes.
	ReusedFiles, ReusedBytes int64
	// Payload bytes taken over as whole previous chunks (each distinct
	// chunk once, however often the index lists it), and the part of
	// them no file refers to.
	InjectedBytes, PaddingBytes int64
	// Chunks of the previous payload the reuse plan retired to bound the
	// padding, and the file bytes they held (read again).
	RetiredChunks int
	RetiredBytes  int64
	// Stream sizes.
	MetaSize, PayloadSize, StatSize int64
}

// hashLimit: a file below it whose metadata changed but whose size did
// not is compared with the digest of its previous content the stat
// table keeps (or, in a table without one, with that content itself:
// files.go), and referenced if that is the same. Larger files are stored
// anew: they cost reading twice, and a new copy of them costs little
// padding.
const hashLimit = 1 << 20

// AddArchive backs up the directory tree at dir into backup b as archive
// name (NAME.pxar). It walks the tree once; entries that vanish or fail
// are reported to opt.OnError and counted in Result.Errors while the
// backup goes on.
func AddArchive(ctx context.Context, b *store.Backup, name, dir string, opt Options) (Result, error) {
	if !strings.HasSuffix(name, ".pxar") || strings.ContainsAny(name, "/\x00") || name == ".pxar" {
		return Result{}, fmt.Errorf("file archive %q: %w: name must end in .pxar", name, store.ErrBadName)
	}
	bl := &builder{s: b.Store(), key: b.Key(), name: name, opts: opt, maxPadding: opt.MaxPadding, start: time.Now(),
		injected: make(map[chunk.Digest]struct{}), hash: sha256.New()}
	if bl.maxPadding == 0 {
		bl.maxPadding = DefaultMaxPadding
	}
	if bl.opts.racyMargin == 0 {
		bl.opts.racyMargin = 2 * time.Second
	}
	bl.keepDigests = opt.digests > 0 || (opt.digests == 0 && keepDigests(bl.s))
	defer bl.closeAll()
	var err error
	if bl.prevSnap, bl.hasPrev, err = b.Reference(ctx, name); err != nil {
		return Result{}, fmt.Errorf("file archive %s from %s: %w", name, dir, err)
	}
	if bl.hasPrev {
		bl.res.Previous = bl.prevSnap.String()
	}
	mode := opt.Mode
	if mode == ModeAuto || mode == ModeMetadata {
		mode = ModeData
		if err := bl.openPrevious(ctx); err != nil {
			bl.logger().Warn("backup: previous archive not usable, reading every file", "archive", name, "err", err)
		} else if bl.prev != nil {
			mode = ModeMetadata
		}
	}
	bl.res.Mode = mode
	var files []store.FileInfo
	if mode == ModeLegacy {
		files, err = bl.legacy(ctx, b.Dir(), dir)
	} else {
		files, err = bl.split(ctx, b.Dir(), dir)
	}
	if err != nil {
		return bl.res, fmt.Errorf("file archive %s from %s: %w", name, dir, err)
	}
	for _, f := range files {
		if err := b.AddFile(f); err != nil {
			return bl.res, err
		}
	}
	return bl.res, nil
}

// builder is one AddArchive in progress.
type builder struct {
	s          *store.Store
	key        *crypt.Key // the backup's (nil: plain)
	name       string
	opts       Options
	maxPadding float64
	start      time.Time
	res        Result
	prev       *previous
	plan       *reusePlan // nil: every previous chunk may be reused
	// injected holds the previous chunks injected so far, for padding
	injected map[chunk.Digest]struct{}
	cmpBuf   []byte    // sameContent's two blocks (compareBuf)
	hash     hash.Hash // SHA-256 of a file's content, for its stat table record
	// keepDigests: the stat table records the digest of each file below
	// hashLimit (keepDigests)
	keepDigests bool
	// prevSnap is the archive's reference (store.Backup.Reference): its
	// chunks of the same streams are taken as present.
	prevSnap store.Snapshot
	hasPrev  bool
	prevBad  bool // the previous archive failed to decode: stop using it
	cache    *chunkcache.Cache
	// touched holds previous chunks found present and touched (reused
	// runs of files), so that a chunk two runs share is touched once.
	touched store.TouchFilter
	rootFD  int

	meta, payload, statS *StreamWriter
	hold                 holdWriter
	stat                 *statWriter
	run                  run
	mirror               mirror
	streams              []*StreamWriter
}

func (b *builder) closeAll() {
	for _, w := range b.streams {
		w.Abort()
	}
	if b.prev != nil {
		b.prev.close()
	}
	if b.cache != nil {
		b.cache.Close()
	}
}

func (b *builder) openPrevious(ctx context.Context) error {
	snap, ok := b.prevSnap, b.hasPrev
	if !ok {
		return nil
	}
	m, err := b.s.ReadManifest(snap)
	if err != nil {
		return err
	}
	if ar, err := store.FindArchive(m, b.name); err != nil || ar.Kind != store.ArchiveSplitPxar {
		return nil // the previous snapshot has no such split archive
	}
	size := b.opts.CacheSize
	if size <= 0 {
		size = prevCacheSize
	}
	if b.cache, err = store.NewCache(b.s, size); err != nil {
		return err
	}
	if b.prev, err = openPrevious(ctx, b.s, snap, b.name, b.cache); err != nil {
		return err
	}
	if b.maxPadding < 0 {
		return nil
	}
	if b.plan, err = b.prev.planReuse(ctx, b.maxPadding); err != nil {
		b.prev.close()
		b.prev = nil
		return err
	}
	b.res.RetiredChunks, b.res.RetiredBytes = b.plan.retiredChunks, int64(b.plan.retiredLive)
	if b.opts.Progress != nil {
		b.opts.Progress.Ref.Store(&b.plan.ref)
	}
	return nil
}

// reusable reports whether the payload of previous entry pe lies in
// chunks the reuse plan keeps.
func (b *builder) reusable(pe *pxar.Entry) bool {
	x, _ := pe.PayloadRef()
	return b.plan.reusable(b.prev.payload, x-pxar.HeaderSize, x+pe.Size)
}

// prevCacheSize is the default cache of the previous archive. It is read
// forward, once (prev.go): a cursor per directory on the current path
// and the goodbye tables at the ends of those directories, a few
// metadata chunks of 256 KiB each. A larger cache only holds chunks
// already passed, up to its bound, whatever the tree's size.
const prevCacheSize = 16 << 20

// metaChunkSize is the average chunk size of the metadata stream and the
// stat table of a split archive: a sixteenth of the payload's (256 KiB by
// default), at least chunk.MinChunkSize. A lookup then decodes little
// more than the metadata it needs, and an incremental backup's metadata
// stream dedups (and skips compressing) everything but the chunks that
// hold changes.
func metaChunkSize(avg int) int {
	if avg == 0 {
		avg = chunk.DefaultChunkSize
	}
	return max(avg/16, chunk.MinChunkSize)
}

func (b *builder) stream(ctx context.Context, path string, avg int, known store.KnownSet) (*StreamWriter, error) {
	w, err := NewStreamWriter(ctx, b.s, path, StreamOptions{ChunkSize: avg, Workers: b.opts.Workers,
		Known: known, Stats: b.opts.Stats, Key: b.key})
	if err == nil {
		b.streams = append(b.streams, w)
	}
	return w, err
}

func (b *builder) walkOptions() walk.Options {
	return walk.Options{Exclude: b.opts.Exclude, Select: b.opts.Select, AllFileSystems: b.opts.AllFileSystems, OnError: b.report,
		ReadAhead: b.opts.ReadAhead}
}

func (b *builder) report(path string, err error) {
	b.res.Errors++
	if b.opts.OnError != nil {
		b.opts.OnError(path, err)
		return
	}
	b.logger().Warn("backup: entry skipped or incomplete", "archive", b.name, "path", path, "err", err)
}

// logger is the backup's logger: Options.Logger, else the store's.
func (b *builder) logger() *slog.Logger {
	if b.opts.Logger != nil {
		return b.opts.Logger
	}
	return b.s.Logger()
}

// progress counts one file of n content bytes stored, read or reused.
func (b *builder) progress(n uint64) {
	if b.opts.Progress != nil {
		b.opts.Progress.Bytes.Add(int64(n))
		b.opts.Progress.Files.Add(1)
	}
}

// legacy writes a single-stream archive.
func (b *builder) legacy(ctx context.Context, snapDir, dir string) ([]store.FileInfo, error) {
	file := b.name + ".didx"
	var known store.KnownSet
	if b.hasPrev {
		known = knownChunks(b.s, b.prevSnap, file)
	}
	w, err := b.stream(ctx, filepath.Join(snapDir, file), b.opts.ChunkSize, known)
	if err != nil {
		return nil, err
	}
	opts := b.walkOptions()
	opts.File = func(ctx context.Context, enc *pxar.Encoder, f *walk.File) (pxar.LinkOffset, error) {
		b.read(f.Path, f.Stat.Size)
		b.progress(uint64(f.Stat.Size))
		return walk.CopyFile(ctx, enc, f)
	}
	if b.res.Walk, err = walk.Walk(ctx, dir, w, nil, opts); err != nil {
		return nil, err
	}
	fi, err := closeStream(w, file)
	b.res.MetaSize = int64(fi.Size)
	return []store.FileInfo{fi}, err
}

func (b *builder) read(path string, size int64) {
	b.res.ReadFiles++
	b.res.ReadBytes += size
	if b.opts.onRead != nil {
		b.opts.onRead(path)
	}
}

func closeStream(w *StreamWriter, file string) (store.FileInfo, error) {
	csum, size, err := w.Close()
	return store.FileInfo{Filename: file, Size: uint64(size), Csum: store.CsumHex(csum)}, err
}

// split writes metadata, payload and stat table streams.
func (b *builder) split(ctx context.Context, snapDir, dir string) ([]store.FileInfo, error) {
	base := strings.TrimSuffix(b.name, ".pxar")
	names := []string{base + ".mpxar.didx", base + ".ppxar.didx", StatTableName(b.name)}
	ws := make([]*StreamWriter, len(names))
	for i, n := range names {
		var known store.KnownSet
		if b.hasPrev {
			known = knownChunks(b.s, b.prevSnap, n)
		}
		avg := metaChunkSize(b.opts.ChunkSize)
		if i == 1 {
			avg = b.opts.ChunkSize
		}
		w, err := b.stream(ctx, filepath.Join(snapDir, n), avg, known)
		if err != nil {
			return nil, err
		}
		ws[i] = w
	}
	b.meta, b.payload, b.statS = ws[0], ws[1], ws[2]
	b.hold.w = b.meta
	var err error
	if b.stat, err = newStatWriter(b.statS); err != nil {
		return nil, err
	}
	if b.rootFD, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(b.rootFD)
	opts := b.walkOptions()
	opts.File = b.file
	opts.Finish = b.resolve
	if b.prev != nil && b.prev.stats != nil {
		opts.Reuse = b.reuse
		if opts.ReadAhead.StatAhead && opts.ReadAhead.ChangedSince.IsZero() {
			// files changed since the previous backup (or untrusted in it)
			// will be read: the walk's helper reads them ahead too
			opts.ReadAhead.ChangedSince = b.prevSnap.Time.Add(-2 * b.opts.racyMargin)
		}
	}
	if b.res.Walk, err = walk.Walk(ctx, dir, &b.hold, b.payload, opts); err != nil {
		return nil, err
	}
	if b.hold.holding {
		return nil, errors.New("internal error: metadata still held after the walk")
	}
	if err := b.stat.flush(); err != nil {
		return nil, err
	}
	out := make([]store.FileInfo, len(ws))
	for i, w := range ws {
		if out[i], err = closeStream(w, names[i]); err != nil {
			return nil, err
		}
	}
	b.res.MetaSize, b.res.PayloadSize, b.res.StatSize = int64(out[0].Size), int64(out[1].Size), int64(out[2].Size)
	b.res.PaddingBytes = max(0, b.res.InjectedBytes-b.res.ReusedBytes-pxar.HeaderSize*b.res.ReusedFiles)
	return out, nil
}

// knownChunks lists the chunks of an index; none if it cannot be read.
func knownChunks(s *store.Store, snap store.Snapshot, file string) store.KnownSet {
	x, err := s.OpenIndexFile(snap, file)
	if err != nil {
		return nil
	}
	defer x.Close()
	set := make(store.KnownSet, x.Len())
	for i := 0; i < x.Len(); i++ {
		d, _, _ := x.Chunk(i)
		set[d] = struct{}{}
	}
	return set
}
