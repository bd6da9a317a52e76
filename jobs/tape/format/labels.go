package format

import (
	"fmt"
	"time"
)

// MediaLabel identifies a tape; it is file 0 of every labelled tape.
type MediaLabel struct {
	UUID      UUID   `json:"uuid"`
	LabelText string `json:"label_text"`
	Ctime     int64  `json:"ctime"`
	Pool      string `json:"pool,omitempty"` // the pool the tape was labelled for
}

// MediaSetLabel assigns a tape to a media set; it is file 1. An all-zero
// UUID reserves an empty tape for a pool.
type MediaSetLabel struct {
	Pool                     string `json:"pool"`
	UUID                     UUID   `json:"uuid"`
	SeqNr                    uint64 `json:"seq_nr"`
	Ctime                    int64  `json:"ctime"`
	EncryptionKeyFingerprint string `json:"encryption_key_fingerprint,omitempty"`
}

// NewMediaLabel returns a label with a fresh UUID.
func NewMediaLabel(text, pool string) MediaLabel {
	return MediaLabel{UUID: NewUUID(), LabelText: text, Ctime: time.Now().Unix(), Pool: pool}
}

// WriteMediaLabel writes l as a complete tape file.
func WriteMediaLabel(w TapeWriter, l MediaLabel) error {
	return writeLabel(w, MagicMediaLabel, l)
}

// WriteMediaSetLabel writes l as a complete tape file.
func WriteMediaSetLabel(w TapeWriter, l MediaSetLabel) error {
	return writeLabel(w, MagicMediaSetLabel, l)
}

func writeLabel(w TapeWriter, magic [8]byte, v any) error {
	if _, err := writeHeader(w, magic, v); err != nil {
		return fmt.Errorf("write %s: %w", ContentName(magic), err)
	}
	if err := w.Finish(false); err != nil {
		return fmt.Errorf("write %s: %w", ContentName(magic), err)
	}
	return nil
}

// ReadMediaLabel reads a media label file.
func ReadMediaLabel(r TapeReader) (MediaLabel, error) {
	var l MediaLabel
	if err := readLabel(r, MagicMediaLabel, &l); err != nil {
		return l, err
	}
	if l.LabelText == "" || l.UUID.IsZero() {
		return l, fmt.Errorf("%w: media label without text or uuid", ErrBadHeader)
	}
	return l, nil
}

// ReadMediaSetLabel reads a media set label file.
func ReadMediaSetLabel(r TapeReader) (MediaSetLabel, error) {
	var l MediaSetLabel
	if err := readLabel(r, MagicMediaSetLabel, &l); err != nil {
		return l, err
	}
	if l.Pool == "" {
		return l, fmt.Errorf("%w: media set label without pool", ErrBadHeader)
	}
	return l, nil
}

func readLabel(r TapeReader, magic [8]byte, v any) error {
	h, js, err := ReadContentHeader(r)
	if err != nil {
		return err
	}
	if err := expect(h, magic); err != nil {
		return err
	}
	if err := parseJSON(h, js, v); err != nil {
		return err
	}
	n, err := r.SkipToEnd()
	if err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("%w: %d bytes after the %s", ErrCorrupt, n, ContentName(magic))
	}
	return nil
}
