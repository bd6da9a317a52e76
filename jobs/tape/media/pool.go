package media

import (
	"fmt"
	"log/slog"

	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// PoolOptions configure a media pool.
type PoolOptions struct {
	// TapeSize is the capacity of tapes the pool creates
	// (0: drive.DefaultCapacity).
	TapeSize int64
	// AutoCreate lets the pool create and label a tape on the virtual
	// drive when no free tape is left; without it a full media set with
	// no free tape fails with ErrNoTape.
	AutoCreate bool
	// LabelPrefix names created tapes <prefix>NNNN (default "<pool>-").
	LabelPrefix string
}

// Pool hands out the tapes of one media pool of a drive.
type Pool struct {
	name   string
	d      *drive.Drive
	inv    *Inventory
	opts   PoolOptions
	catDir string
	log    *slog.Logger
}

// OpenPool opens the pool name on the drive.
func OpenPool(d *drive.Drive, name string, opts PoolOptions, log *slog.Logger) (*Pool, error) {
	if err := drive.CheckLabel(name); err != nil {
		return nil, fmt.Errorf("pool name: %w", err)
	}
	inv, err := LoadInventory(d.Dir())
	if err != nil {
		return nil, err
	}
	if opts.LabelPrefix == "" {
		opts.LabelPrefix = name + "-"
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Pool{name: name, d: d, inv: inv, opts: opts, catDir: CatalogDir(d), log: log}, nil
}

// Name returns the pool's name.
func (p *Pool) Name() string { return p.name }

// Inventory returns the drive's inventory.
func (p *Pool) Inventory() *Inventory { return p.inv }

// CurrentSet returns the pool's newest media set.
func (p *Pool) CurrentSet() (format.MediaSetLabel, bool) {
	sets := p.inv.MediaSets(p.name)
	if len(sets) == 0 {
		return format.MediaSetLabel{}, false
	}
	return sets[len(sets)-1], true
}

// free reports whether a labelled tape may join a new media set of the
// pool: labelled for this pool or for none, in no media set (or only
// reserved for this pool), not full.
func (p *Pool) free(m Media) bool {
	if m.Full || (m.Label.Pool != "" && m.Label.Pool != p.name) {
		return false
	}
	return m.Set == nil || (m.Set.UUID.IsZero() && m.Set.Pool == p.name)
}

// allocate returns a tape for the pool's current media set: a free
// labelled tape, else a blank tape of the drive (labelled now), else a
// newly created one when AutoCreate is set.
func (p *Pool) allocate() (Media, error) {
	for _, m := range p.inv.List() {
		if p.free(m) {
			return m, nil
		}
	}
	tapes, err := p.d.Tapes()
	if err != nil {
		return Media{}, err
	}
	used := map[string]bool{}
	for _, t := range tapes {
		used[t.Label] = true
		if _, known := p.inv.LookupLabel(t.Label); !known && t.Files == 0 {
			return p.label(t.Label)
		}
	}
	if !p.opts.AutoCreate {
		return Media{}, fmt.Errorf("pool %s: %w (no free tape in the pool and auto-create is off)", p.name, ErrNoTape)
	}
	for i := 1; ; i++ {
		text := fmt.Sprintf("%s%04d", p.opts.LabelPrefix, i)
		if used[text] {
			continue
		}
		if err := p.d.CreateTape(text, p.opts.TapeSize); err != nil {
			return Media{}, fmt.Errorf("pool %s: create tape: %w", p.name, err)
		}
		p.log.Info("created tape", "pool", p.name, "tape", text, "size", p.opts.TapeSize)
		return p.label(text)
	}
}

func (p *Pool) label(text string) (Media, error) {
	l, err := LabelTape(p.d, p.inv, text, p.name, false)
	if err != nil {
		return Media{}, fmt.Errorf("pool %s: %w", p.name, err)
	}
	p.log.Info("labelled tape", "pool", p.name, "tape", text, "uuid", l.UUID)
	return Media{Label: l}, nil
}

// loadChecked loads a tape and checks its labels against the inventory.
func (p *Pool) loadChecked(m Media) (*format.MediaSetLabel, error) {
	if err := p.d.Load(m.Label.LabelText); err != nil {
		return nil, err
	}
	l, set, err := ReadLabels(p.d)
	if err != nil {
		return nil, fmt.Errorf("tape %s: read labels: %w", m.Label.LabelText, err)
	}
	if l.UUID != m.Label.UUID {
		return nil, fmt.Errorf("tape %s: %w: label uuid %s, inventory says %s", m.Label.LabelText, ErrMismatch, l.UUID, m.Label.UUID)
	}
	if m.Set != nil && !m.Set.UUID.IsZero() && (set == nil || set.UUID != m.Set.UUID || set.SeqNr != m.Set.SeqNr) {
		return nil, fmt.Errorf("tape %s: %w: tape's media set label differs from the inventory's (%s/%d)",
			m.Label.LabelText, ErrMismatch, m.Set.UUID, m.Set.SeqNr)
	}
	return set, nil
}
