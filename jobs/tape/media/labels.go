package media

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cairnfs/cairn/jobs/tape/catalog"
	"github.com/cairnfs/cairn/jobs/tape/drive"
	"github.com/cairnfs/cairn/jobs/tape/format"
)

// catalogSubdir is where a drive's media catalogs live, in its directory.
const catalogSubdir = "catalog"

// CatalogDir returns where a drive's media catalogs live.
func CatalogDir(d *drive.Drive) string { return filepath.Join(d.Dir(), catalogSubdir) }

// ReadLabels reads the loaded tape's media label and, when present, its
// media set label. A blank tape returns drive.ErrEndOfData.
func ReadLabels(d *drive.Drive) (format.MediaLabel, *format.MediaSetLabel, error) {
	if err := d.Rewind(); err != nil {
		return format.MediaLabel{}, nil, err
	}
	r, err := d.ReadFile()
	if err != nil {
		return format.MediaLabel{}, nil, err
	}
	l, err := format.ReadMediaLabel(r)
	r.Close()
	if err != nil {
		return l, nil, fmt.Errorf("tape file 0: %w", err)
	}
	r, err = d.ReadFile()
	if errors.Is(err, drive.ErrEndOfData) {
		return l, nil, nil
	}
	if err != nil {
		return l, nil, err
	}
	defer r.Close()
	set, err := format.ReadMediaSetLabel(r)
	if err != nil {
		return l, nil, fmt.Errorf("tape %s file 1: %w", l.LabelText, err)
	}
	if set.EncryptionKeyFingerprint != "" {
		return l, &set, fmt.Errorf("tape %s: %w", l.LabelText, ErrEncrypted)
	}
	return l, &set, nil
}

// LabelTape erases the tape with the given label text, writes a new
// media label (for pool, which may be empty) and records it in the
// inventory. Unless force is set the tape must be blank or unknown to
// the inventory's media sets.
func LabelTape(d *drive.Drive, inv *Inventory, text, pool string, force bool) (format.MediaLabel, error) {
	if err := d.Load(text); err != nil {
		return format.MediaLabel{}, err
	}
	if old, ok := inv.LookupLabel(text); ok {
		if old.Set != nil && !old.Set.UUID.IsZero() && !force {
			return format.MediaLabel{}, fmt.Errorf("tape %s belongs to media set %s: %w (use force)", text, old.Set.UUID, ErrNotBlank)
		}
		os.Remove(catalog.Path(CatalogDir(d), old.Label.UUID))
	} else if n, err := d.FileCount(); err != nil {
		return format.MediaLabel{}, err
	} else if n > 0 && !force {
		return format.MediaLabel{}, fmt.Errorf("tape %s holds %d files: %w (use force)", text, n, ErrNotBlank)
	}
	if err := d.Format(); err != nil {
		return format.MediaLabel{}, err
	}
	l := format.NewMediaLabel(text, pool)
	w, err := d.WriteFile()
	if err != nil {
		return l, err
	}
	if err := format.WriteMediaLabel(w, l); err != nil {
		w.Close()
		return l, fmt.Errorf("tape %s: %w", text, err)
	}
	inv.Put(Media{Label: l})
	return l, inv.Save()
}

// EraseTape formats a tape and forgets it (inventory and catalog).
func EraseTape(d *drive.Drive, inv *Inventory, text string) error {
	if err := d.Load(text); err != nil {
		return err
	}
	if err := d.Format(); err != nil {
		return err
	}
	if old, ok := inv.LookupLabel(text); ok {
		os.Remove(catalog.Path(CatalogDir(d), old.Label.UUID))
		inv.Remove(text)
		return inv.Save()
	}
	return nil
}

// writeSetLabel makes the loaded tape a member of a media set: everything
// after its media label is erased and a media set label written.
func writeSetLabel(d *drive.Drive, set format.MediaSetLabel) error {
	n, err := d.FileCount()
	if err != nil {
		return err
	}
	if n < 1 {
		return fmt.Errorf("tape has no media label")
	}
	if err := d.MoveToFile(1); err != nil {
		return err
	}
	w, err := d.WriteFile()
	if err != nil {
		return err
	}
	if err := format.WriteMediaSetLabel(w, set); err != nil {
		w.Close()
		return err
	}
	return nil
}
