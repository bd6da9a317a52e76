package media

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/cairnfs/cairn/jobs/tape/format"
	"github.com/cairnfs/cairn/store"
)

// Sentinel errors, matched with errors.Is.
var (
	ErrNoTape    = errors.New("no writable tape available")
	ErrMismatch  = errors.New("tape does not match the inventory or catalog")
	ErrUnknown   = errors.New("unknown tape or media set")
	ErrTooLarge  = errors.New("archive does not fit on an empty tape")
	ErrEncrypted = errors.New("encrypted media sets are not supported")
	ErrNotBlank  = errors.New("tape is not blank")
)

// Media is one labelled tape as the inventory knows it.
type Media struct {
	Label format.MediaLabel     `json:"label"`
	Set   *format.MediaSetLabel `json:"media_set_label,omitempty"`
	Full  bool                  `json:"full,omitempty"`
}

// Inventory lists the labelled tapes of a drive (inventory.json).
type Inventory struct {
	path  string
	media []Media
}

// maxInventory bounds inventory.json: a few hundred bytes per tape.
const maxInventory = 64 << 20

// LoadInventory reads <dir>/inventory.json (empty when missing).
func LoadInventory(dir string) (*Inventory, error) {
	inv := &Inventory{path: filepath.Join(dir, "inventory.json")}
	raw, err := store.ReadFileBounded(inv.path, maxInventory)
	if errors.Is(err, fs.ErrNotExist) {
		return inv, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inventory: %w", err)
	}
	if err := json.Unmarshal(raw, &inv.media); err != nil {
		return nil, fmt.Errorf("inventory %s: %w", inv.path, err)
	}
	return inv, nil
}

// Save writes the inventory (temp file + rename).
func (inv *Inventory) Save() error {
	raw, err := json.MarshalIndent(inv.media, "", "  ")
	if err != nil {
		return err
	}
	tmp := inv.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return fmt.Errorf("inventory: %w", err)
	}
	if err := os.Rename(tmp, inv.path); err != nil {
		return fmt.Errorf("inventory: %w", err)
	}
	return nil
}

// List returns all tapes, sorted by label text.
func (inv *Inventory) List() []Media {
	out := append([]Media(nil), inv.media...)
	sort.Slice(out, func(i, j int) bool { return out[i].Label.LabelText < out[j].Label.LabelText })
	return out
}

// Lookup finds a tape by UUID.
func (inv *Inventory) Lookup(u format.UUID) (Media, bool) {
	for _, m := range inv.media {
		if m.Label.UUID == u {
			return m, true
		}
	}
	return Media{}, false
}

// LookupLabel finds a tape by label text.
func (inv *Inventory) LookupLabel(text string) (Media, bool) {
	for _, m := range inv.media {
		if m.Label.LabelText == text {
			return m, true
		}
	}
	return Media{}, false
}

// Put adds or replaces a tape (matched by label text).
func (inv *Inventory) Put(m Media) {
	for i := range inv.media {
		if inv.media[i].Label.LabelText == m.Label.LabelText {
			inv.media[i] = m
			return
		}
	}
	inv.media = append(inv.media, m)
}

// Remove drops a tape by label text.
func (inv *Inventory) Remove(text string) {
	for i := range inv.media {
		if inv.media[i].Label.LabelText == text {
			inv.media = append(inv.media[:i], inv.media[i+1:]...)
			return
		}
	}
}

// SetMembers returns the tapes of a media set in sequence order; a gap
// in the sequence is an error.
func (inv *Inventory) SetMembers(set format.UUID) ([]Media, error) {
	var out []Media
	for _, m := range inv.media {
		if m.Set != nil && m.Set.UUID == set {
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Set.SeqNr < out[j].Set.SeqNr })
	for i, m := range out {
		if m.Set.SeqNr != uint64(i) {
			return nil, fmt.Errorf("media set %s: tape %d of the set is missing (have %s as %d)",
				set, i, m.Label.LabelText, m.Set.SeqNr)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("media set %s: %w", set, ErrUnknown)
	}
	return out, nil
}

// MediaSets returns the media sets of a pool (or of all pools for ""),
// oldest first.
func (inv *Inventory) MediaSets(pool string) []format.MediaSetLabel {
	seen := map[format.UUID]format.MediaSetLabel{}
	for _, m := range inv.media {
		if m.Set == nil || m.Set.UUID.IsZero() || (pool != "" && m.Set.Pool != pool) {
			continue
		}
		if s, ok := seen[m.Set.UUID]; !ok || m.Set.SeqNr == 0 || s.SeqNr != 0 {
			seen[m.Set.UUID] = *m.Set
		}
	}
	out := make([]format.MediaSetLabel, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Ctime != out[j].Ctime {
			return out[i].Ctime < out[j].Ctime
		}
		return out[i].UUID.String() < out[j].UUID.String()
	})
	return out
}
