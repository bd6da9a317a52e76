package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

// maxNotes bounds a snapshot's notes: they live in the manifest, which
// every listing reads. PBS sets no bound of its own; 64 KiB is pages of
// text.
const maxNotes = 64 << 10

func (a *app) notesCmd() *cobra.Command {
	var ns string
	cmd := &cobra.Command{
		Use:   "notes [--ns NS] SNAPSHOT [TEXT | -]",
		Short: "print or set a snapshot's notes",
		Long: `Notes prints the notes of a finished snapshot ([ns/NAME/…]TYPE/ID/TIME, or
TYPE/ID/latest), escaped where a terminal would interpret them. With TEXT
it sets them (- reads them from standard input; "" removes them). As in
PBS, the notes are the "notes" key of the manifest's unprotected part:
setting them changes neither the signed part nor the verify state, and
works on protected snapshots too. Trailing newlines are dropped; notes
must be UTF-8 of at most 64 KiB without control characters other than
newline and tab, else the command exits 2 and changes nothing. The first
line is the NOTES column of cairn snapshots.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			r, err := parseRefIn(ns, args[0])
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return a.printNotes(r)
			}
			text, err := a.notesText(args[1])
			if err != nil {
				return err
			}
			return a.setNotes(r, text)
		},
	}
	nsFlag(cmd, &ns)
	a.lockWaitFlag(cmd)
	return cmd
}

// notesText is the notes an argument gives: itself, or standard input
// for "-" (read up to one byte past the bound), checked.
func (a *app) notesText(arg string) (string, error) {
	text := arg
	if arg == "-" {
		b, err := io.ReadAll(io.LimitReader(a.stdin, maxNotes+1))
		if err != nil {
			return "", fmt.Errorf("notes from standard input: %w", err)
		}
		text = string(b)
	}
	text = strings.TrimRight(text, "\r\n")
	if err := checkNotes(text); err != nil {
		return "", usageErr("notes: %v", err)
	}
	return text, nil
}

// checkNotes refuses notes longer than maxNotes, not UTF-8, or holding
// control characters other than newline and tab.
func checkNotes(s string) error {
	if len(s) > maxNotes {
		return fmt.Errorf("more than %d bytes", maxNotes)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("not UTF-8")
	}
	for i, c := range s {
		if c != '\n' && c != '\t' && unicode.IsControl(c) {
			return fmt.Errorf("control character %U at byte %d (only newline and tab are allowed)", c, i)
		}
	}
	return nil
}

// openSnapshot opens the store and resolves r in it.
func (a *app) openSnapshot(r store.Ref) (*store.Store, store.Snapshot, error) {
	s, err := a.openStore()
	if err != nil {
		return nil, store.Snapshot{}, err
	}
	snap, err := s.Resolve(r)
	if err != nil {
		s.Close()
		return nil, snap, err
	}
	return s, snap, nil
}

func (a *app) printNotes(r store.Ref) error {
	s, snap, err := a.openSnapshot(r)
	if err != nil {
		return err
	}
	defer s.Close()
	m, err := s.ReadManifest(snap)
	if err != nil {
		return err
	}
	notes, err := manifestNotes(m)
	if err != nil || notes == "" {
		return err
	}
	for _, line := range strings.Split(notes, "\n") {
		cells := strings.Split(line, "\t") // tabs as they are, the rest escaped
		for i, c := range cells {
			cells[i] = escapeText(c)
		}
		fmt.Fprintln(a.stdout, strings.Join(cells, "\t"))
	}
	return nil
}

// manifestNotes is the manifest's notes ("" when it has none).
func manifestNotes(m *store.Manifest) (string, error) {
	raw, ok := m.Unprotected["notes"]
	if !ok {
		return "", nil
	}
	var notes string
	if err := json.Unmarshal(raw, &notes); err != nil {
		return "", fmt.Errorf("notes are not a string: %w", err)
	}
	return notes, nil
}

func (a *app) setNotes(r store.Ref, text string) error {
	s, snap, err := a.openSnapshot(r)
	if err != nil {
		return err
	}
	defer s.Close()
	raw, err := json.Marshal(text)
	if err != nil {
		return fmt.Errorf("notes of %s: %w", snap, err)
	}
	err = s.UpdateManifest(a.ctx, snap, func(m *store.Manifest) error {
		if m.Unprotected == nil {
			m.Unprotected = map[string]json.RawMessage{}
		}
		if text == "" {
			delete(m.Unprotected, "notes")
		} else {
			m.Unprotected["notes"] = raw
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set notes of %s: %w", snap, err)
	}
	if !a.quiet {
		fmt.Fprintf(a.stdout, "notes of %s set\n", snap)
	}
	return nil
}
