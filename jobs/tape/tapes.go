package tape

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cairnfs/cairn/jobs"
	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/media"
)

// MinTapeSize is the capacity of the smallest tape a drive creates.
const MinTapeSize = drive.MinCapacity

// CheckName checks a tape label or pool name; its error wraps
// jobs.ErrBadParam.
func CheckName(what, name string) error {
	if err := drive.CheckLabel(name); err != nil {
		return fmt.Errorf("%w: %s: %w", jobs.ErrBadParam, what, err)
	}
	return nil
}

// LabelOptions are how Label labels tapes.
type LabelOptions struct {
	Pool     string // the pool the tapes are for; empty: any pool
	TapeSize int64  // capacity of the tapes created now
	Force    bool   // relabel tapes that hold data or belong to a media set
}

// Labelled is a tape Label wrote a media label to.
type Labelled struct {
	Label, UUID, Pool string
}

// Label writes a new media label to each tape of the drive at dir,
// creating those the drive lacks. A tape that belongs to a media set or
// holds data is refused (media.ErrNotBlank) unless o.Force. Bad names and
// sizes are refused before any tape is touched, with errors wrapping
// jobs.ErrBadParam; the tapes labelled before another error are returned
// with it.
func Label(ctx context.Context, dir string, labels []string, o LabelOptions) ([]Labelled, error) {
	if o.TapeSize < MinTapeSize {
		return nil, fmt.Errorf("%w: tape size %d: want at least 1M", jobs.ErrBadParam, o.TapeSize)
	}
	if o.Pool != "" {
		if err := CheckName("pool", o.Pool); err != nil {
			return nil, err
		}
	}
	for _, text := range labels {
		if err := CheckName("label", text); err != nil {
			return nil, err
		}
	}
	d, inv, err := openInventory(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var done []Labelled
	for _, text := range labels {
		if err := d.CreateTape(text, o.TapeSize); err != nil && !errors.Is(err, drive.ErrExists) {
			return done, err
		}
		l, err := media.LabelTape(d, inv, text, o.Pool, o.Force)
		if err != nil {
			return done, err
		}
		done = append(done, Labelled{Label: text, UUID: l.UUID.String(), Pool: o.Pool})
	}
	return done, nil
}

// EraseOptions are how Erase erases tapes.
type EraseOptions struct {
	Force  bool // erase tapes that belong to a media set
	Remove bool // also delete the tapes from the drive
}

// Erase formats each tape of the drive at dir (its files and label are
// gone) and forgets it (inventory and catalog). A tape of a media set is
// refused (media.ErrNotBlank) unless o.Force. It returns the tapes erased,
// also when it stops at an error.
func Erase(ctx context.Context, dir string, labels []string, o EraseOptions) ([]string, error) {
	d, inv, err := openInventory(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	var done []string
	for _, text := range labels {
		if m, ok := inv.LookupLabel(text); ok && m.Set != nil && !m.Set.UUID.IsZero() && !o.Force {
			return done, fmt.Errorf("tape %s belongs to media set %s (pool %s): %w; use --force to erase it anyway",
				text, m.Set.UUID, m.Set.Pool, media.ErrNotBlank)
		}
		if err := media.EraseTape(d, inv, text); err != nil {
			return done, err
		}
		if o.Remove {
			if err := d.Unload(); err != nil {
				return done, err
			}
			if err := d.RemoveTape(text); err != nil {
				return done, err
			}
		}
		done = append(done, text)
	}
	return done, nil
}

// RebuiltCatalog is what RebuildCatalogs found on one tape.
type RebuiltCatalog struct {
	Label     string
	Err       error // the tape could not be read; nothing else is set
	Files     int
	Chunks    int
	Snapshots int
	MediaSet  string // empty: the tape belongs to no media set
	SeqNr     uint64
}

// RebuildCatalogs reads each tape (default: every written tape of the
// drive at dir) from start to end, writes its media catalog anew and
// updates the inventory from its labels, calling done after each tape. A
// tape that fails does not stop the others; the error returned is about
// the drive.
func RebuildCatalogs(ctx context.Context, dir string, labels []string, logger *slog.Logger, done func(RebuiltCatalog)) error {
	d, err := OpenTapeDrive(ctx, dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if len(labels) == 0 {
		tapes, err := d.Tapes()
		if err != nil {
			return err
		}
		for _, t := range tapes {
			if t.Files > 0 {
				labels = append(labels, t.Label)
			}
		}
		if len(labels) == 0 {
			return fmt.Errorf("drive %s holds no written tape", d.Dir())
		}
	}
	for _, text := range labels {
		r := RebuiltCatalog{Label: text}
		c, err := media.RebuildCatalog(ctx, d, text, logger)
		if err != nil {
			r.Err = err
			done(r)
			continue
		}
		r.Files = len(c.Files())
		for _, f := range c.Files() {
			r.Chunks += f.Chunks
			if f.Kind == catalog.KindSnapshot {
				r.Snapshots++
			}
		}
		if u, seq, ok := c.MediaSet(); ok {
			r.MediaSet, r.SeqNr = u.String(), seq
		}
		done(r)
	}
	return nil
}

// openInventory opens the drive at dir and loads its inventory.
func openInventory(ctx context.Context, dir string) (*drive.Drive, *media.Inventory, error) {
	d, err := OpenTapeDrive(ctx, dir)
	if err != nil {
		return nil, nil, err
	}
	inv, err := media.LoadInventory(d.Dir())
	if err != nil {
		d.Close()
		return nil, nil, err
	}
	return d, inv, nil
}
