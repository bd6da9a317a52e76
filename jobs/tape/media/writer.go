package media

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// Chunk is a chunk on its way to tape: its digest and raw DataBlob.
type Chunk struct {
	Digest chunk.Digest
	Blob   []byte
	// Done, when set, is called once Blob is on tape and no longer
	// needed, so that its buffer can be reused.
	Done func()
}

// WriterOptions configure a pool writer.
type WriterOptions struct {
	NewSet         bool  // start a new media set instead of appending to the pool's current one
	MaxArchiveSize int64 // chunk archive limit (0: format.MaxChunkArchiveSize)
	// OnTape, when set, is called with a tape's label when the writer
	// starts writing to it.
	OnTape func(label string)
}

// WriterStats count what a writer put on tape.
type WriterStats struct {
	Chunks, ChunkBytes int64 // chunks and their blob bytes
	Archives           int   // chunk archives
	Snapshots          int   // snapshot archives
	Tapes              []string
	// Wait is the time WriteChunks waited for the next chunk: the
	// writer's idle time, which shows whether reading or writing is the
	// bottleneck.
	Wait time.Duration
}

// Writer appends archives to a media set, one tape file at a time,
// moving to the next tape of the pool at LEOM. It is not safe for
// concurrent use.
type Writer struct {
	p       *Pool
	opts    WriterOptions
	set     format.MediaSetLabel
	members []Media
	cats    catalog.Set
	writeC  map[format.UUID]*catalog.Catalog // catalogs open for writing
	cur     *tapeState
	stats   WriterStats
}

type tapeState struct {
	m    Media
	cat  *catalog.Catalog
	full bool
}

// NewWriter starts a write session on the pool's current media set (or a
// new one), loading the catalogs of the set's tapes.
func (p *Pool) NewWriter(opts WriterOptions) (*Writer, error) {
	w := &Writer{p: p, opts: opts, writeC: map[format.UUID]*catalog.Catalog{}}
	set, ok := p.CurrentSet()
	if opts.NewSet || !ok {
		w.set = format.MediaSetLabel{Pool: p.name, UUID: format.NewUUID(), Ctime: time.Now().Unix()}
		p.log.Info("new media set", "pool", p.name, "uuid", w.set.UUID)
		return w, nil
	}
	w.set = set
	members, err := p.inv.SetMembers(set.UUID)
	if err != nil {
		return nil, err
	}
	for i, m := range members {
		last := i == len(members)-1 && !m.Full
		c, err := catalog.Open(p.catDir, m.Label.UUID, m.Set, last)
		if err != nil {
			w.closeCatalogs()
			return nil, fmt.Errorf("media set %s tape %s: %w (rebuild the tape's catalog)", set.UUID, m.Label.LabelText, err)
		}
		if last {
			w.writeC[m.Label.UUID] = c
		}
		if c.Torn() > 0 {
			p.log.Warn("media catalog has a torn tail (cut off when written)", "tape", m.Label.LabelText, "bytes", c.Torn())
		}
		w.cats.Add(c)
	}
	w.members = members
	return w, nil
}

// MediaSet returns the media set being written.
func (w *Writer) MediaSet() format.MediaSetLabel { return w.set }

// Catalog returns the media set's catalog, including what this session
// registered.
func (w *Writer) Catalog() *catalog.Set { return &w.cats }

// ContainsChunk reports whether the media set already holds the chunk.
func (w *Writer) ContainsChunk(store string, d chunk.Digest) bool {
	return w.cats.ContainsChunk(store, d)
}

// ContainsSnapshot reports whether the media set already holds the
// snapshot archive.
func (w *Writer) ContainsSnapshot(store, snapshot string) bool {
	_, _, ok := w.cats.LookupSnapshot(store, snapshot)
	return ok
}

// Stats returns what the session wrote so far.
func (w *Writer) Stats() WriterStats { return w.stats }

// CurrentTape returns the label of the tape being written ("" before the
// first write).
func (w *Writer) CurrentTape() string {
	if w.cur == nil {
		return ""
	}
	return w.cur.m.Label.LabelText
}

// ensureTape makes sure a writable tape is loaded and positioned.
func (w *Writer) ensureTape() error {
	if w.cur != nil && !w.cur.full {
		return nil
	}
	if w.cur == nil && len(w.members) > 0 && !w.members[len(w.members)-1].Full {
		return w.continueTape(w.members[len(w.members)-1])
	}
	m, err := w.p.allocate()
	if err != nil {
		if w.cur != nil {
			return fmt.Errorf("tape %s is full: %w", w.cur.m.Label.LabelText, err)
		}
		return err
	}
	return w.joinSet(m)
}

func (w *Writer) use(m Media, c *catalog.Catalog) {
	w.cur = &tapeState{m: m, cat: c}
	w.stats.Tapes = append(w.stats.Tapes, m.Label.LabelText)
	if w.opts.OnTape != nil {
		w.opts.OnTape(m.Label.LabelText)
	}
	w.p.log.Info("writing to tape", "tape", m.Label.LabelText, "media_set", w.set.UUID, "seq_nr", m.Set.SeqNr)
}

// joinSet makes a free tape the next member of the media set; a tape
// after the first starts with the catalogs of the earlier ones.
func (w *Writer) joinSet(m Media) error {
	if _, err := w.p.loadChecked(Media{Label: m.Label}); err != nil {
		return err
	}
	set := w.set
	set.SeqNr = uint64(len(w.members))
	if err := writeSetLabel(w.p.d, set); err != nil {
		return fmt.Errorf("tape %s: write media set label: %w", m.Label.LabelText, err)
	}
	c, err := catalog.Create(w.p.catDir, m.Label.UUID, &set)
	if err != nil {
		return err
	}
	m.Set, m.Full = &set, false
	w.p.inv.Put(m)
	if err := w.p.inv.Save(); err != nil {
		c.Close()
		return err
	}
	w.members = append(w.members, m)
	w.cats.Add(c)
	w.writeC[m.Label.UUID] = c
	w.use(m, c)
	for _, prev := range w.members[:len(w.members)-1] {
		done, leom, err := w.writeCatalogArchive(prev)
		if err != nil {
			return err
		}
		if !done || leom {
			// a later tape would need even more room for the catalogs
			return fmt.Errorf("tape %s: catalog of tape %s leaves no room for data: %w (use larger tapes)",
				m.Label.LabelText, prev.Label.LabelText, ErrTooLarge)
		}
	}
	return nil
}

// continueTape loads the set's last tape and positions it after its last
// catalogued file, skipping catalog archives written after it. Files
// beyond (from an interrupted session) are overwritten.
func (w *Writer) continueTape(m Media) error {
	if _, err := w.p.loadChecked(m); err != nil {
		return err
	}
	c := w.writeC[m.Label.UUID]
	d := w.p.d
	last, _ := c.LastFile()
	n, err := d.FileCount()
	if err != nil {
		return err
	}
	if int(last) >= n {
		return fmt.Errorf("tape %s: %w: catalog lists file %d, the tape has %d files", m.Label.LabelText, ErrMismatch, last, n)
	}
	if f, ok := c.File(last); ok && f.Kind != catalog.KindLabel {
		if err := checkFileUUID(d, m.Label.LabelText, f); err != nil {
			return err
		}
	}
	pos := int(last) + 1
	for ; pos < n && completeCatalogArchive(d, pos); pos++ {
	}
	if err := d.MoveToFile(pos); err != nil {
		return err
	}
	w.use(m, c)
	return nil
}

// markFull records that the current tape takes no more files.
func (w *Writer) markFull() error {
	cur := w.cur
	cur.full = true
	cur.m.Full = true
	w.p.inv.Put(cur.m)
	for i := range w.members {
		if w.members[i].Label.UUID == cur.m.Label.UUID {
			w.members[i].Full = true
		}
	}
	w.p.log.Info("tape full", "tape", cur.m.Label.LabelText)
	if err := cur.cat.Commit(); err != nil {
		return err
	}
	return w.p.inv.Save()
}

// fresh reports whether the current tape holds no archive yet (only
// labels and catalog archives).
func (w *Writer) fresh() bool {
	last, _ := w.cur.cat.LastFile()
	return last <= 1
}

// Commit makes the registered archives durable in the catalog.
func (w *Writer) Commit() error {
	if w.cur == nil {
		return nil
	}
	return w.cur.cat.Commit()
}

// Close ends the session: it appends the current tape's catalog as a
// catalog archive (as PBS does at the end of a backup), commits and
// closes the catalogs.
func (w *Writer) Close(ctx context.Context) error {
	var err error
	if w.cur != nil && !w.cur.full && ctx.Err() == nil {
		var done, leom bool
		if err = w.cur.cat.Commit(); err == nil {
			done, leom, err = w.writeCatalogArchive(w.cur.m)
		}
		if err == nil && (!done || leom) {
			err = w.markFull()
		}
	}
	if cerr := w.Commit(); err == nil {
		err = cerr
	}
	if serr := w.p.inv.Save(); err == nil {
		err = serr
	}
	w.closeCatalogs()
	return err
}

func (w *Writer) closeCatalogs() {
	for _, c := range w.cats.Catalogs() {
		c.Close()
	}
}

// writeCatalogArchive copies the committed catalog of tape m to the
// current position of the current tape. leom reports that the tape
// reached its early warning zone, also on the archive's last block: the
// tape then takes no further file.
func (w *Writer) writeCatalogArchive(m Media) (done, leom bool, err error) {
	path := catalog.Path(w.p.catDir, m.Label.UUID)
	f, err := os.Open(path)
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, false, err
	}
	fw, err := w.p.d.WriteFile()
	if err != nil {
		return false, false, err
	}
	info := format.CatalogInfo{Media: m.Label.UUID, MediaSet: w.set.UUID, SeqNr: m.Set.SeqNr}
	_, done, err = format.WriteCatalogArchive(fw, info, f, fi.Size())
	fw.Close()
	return done, fw.LEOM(), err
}

// WriteSnapshot writes a snapshot archive (after its chunks) and commits
// the catalog. At LEOM the archive is written again on the next tape.
func (w *Writer) WriteSnapshot(ctx context.Context, store, snapshot string, fsys fs.FS, files []string) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.ensureTape(); err != nil {
			return err
		}
		pos, err := w.p.d.Position()
		if err != nil {
			return err
		}
		fresh := w.fresh()
		fw, err := w.p.d.WriteFile()
		if err != nil {
			return err
		}
		uuid, done, err := format.WriteSnapshotArchive(fw, store, snapshot, fsys, files)
		fw.Close()
		if err != nil {
			return fmt.Errorf("tape %s file %d: %w", w.cur.m.Label.LabelText, pos, err)
		}
		if done {
			if err := w.cur.cat.RegisterSnapshot(uuid, uint64(pos), store, snapshot); err != nil {
				return err
			}
			w.stats.Snapshots++
			if fw.LEOM() { // the last block reached the warning zone
				return w.markFull()
			}
			return w.cur.cat.Commit()
		}
		if err := w.markFull(); err != nil {
			return err
		}
		if fresh {
			return fmt.Errorf("snapshot archive %s: %w", snapshot, ErrTooLarge)
		}
	}
}
