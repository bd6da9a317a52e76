package keyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrPaperkey: data that is neither a key file nor an encrypted PEM key.
var ErrPaperkey = errors.New("neither a PEM-formatted private key nor a PBS key file")

// PaperkeyBlock is one block of a paper key: its text lines and the data
// its QR code encodes (the lines joined by newlines, as PBS's
// generate_qr_code gives qrencode).
type PaperkeyBlock struct {
	Lines  []string
	QRData string
}

// Paperkey lays out data (a key file, or a master private key's PEM) as
// PBS's `key paperkey --output-format text` does, without the QR codes
// (PBS has qrencode draw them; the caller may too). A key file prints
// pretty-printed between BEGIN/END PROXMOX BACKUP KEY lines, one block; a
// PEM key as numbered lines in blocks of 5, each a page.
func Paperkey(name string, data []byte) ([]PaperkeyBlock, error) {
	s := string(data)
	if strings.HasPrefix(s, "-----BEGIN ENCRYPTED PRIVATE KEY-----\n") || strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----\n") {
		s = strings.TrimRight(s, " \t\r\n")
		if !strings.HasSuffix(s, "\n-----END ENCRYPTED PRIVATE KEY-----") && !strings.HasSuffix(s, "\n-----END RSA PRIVATE KEY-----") {
			return nil, fmt.Errorf("%s: unexpected key format: %w", name, ErrPaperkey)
		}
		var lines []string
		for _, l := range strings.Split(s, "\n") {
			if l = strings.TrimRight(l, " \t\r"); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) < 20 {
			return nil, fmt.Errorf("%s: unexpected key format (%d lines): %w", name, len(lines), ErrPaperkey)
		}
		var blocks []PaperkeyBlock
		for i := 0; i < len(lines); i += 5 {
			chunk := lines[i:min(i+5, len(lines))]
			b := PaperkeyBlock{QRData: strings.Join(chunk, "\n")}
			for j, l := range chunk {
				b.Lines = append(b.Lines, fmt.Sprintf("%2d: %s", i+j, l))
			}
			blocks = append(blocks, b)
		}
		return blocks, nil
	}
	c, err := Parse(name, data)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", err, ErrPaperkey)
	}
	f, err := c.Marshal()
	if err != nil {
		return nil, err
	}
	defer wipe(f)
	// Back into fileJSON, so the indented form keeps PBS's field order.
	var v fileJSON
	if err := json.Unmarshal(f, &v); err != nil {
		return nil, err
	}
	pretty, err := encode(v, "  ")
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(pretty), "\n")
	text := append([]string{"-----BEGIN PROXMOX BACKUP KEY-----"}, lines...)
	text = append(text, "-----END PROXMOX BACKUP KEY-----")
	return []PaperkeyBlock{{Lines: text, QRData: string(pretty)}}, nil
}

// PaperkeyText renders blocks as PBS's text paper key: each block's lines,
// its QR code when qr draws one (PBS runs `qrencode -t utf8i -m0 -s1 -lm`),
// and after each block of a PEM key a form feed line (a page break).
func PaperkeyText(blocks []PaperkeyBlock, qr func(data string) (string, error)) (string, error) {
	var b strings.Builder
	pem := len(blocks) > 0 && !strings.HasPrefix(blocks[0].Lines[0], "-----BEGIN PROXMOX BACKUP KEY-----")
	for _, blk := range blocks {
		for _, l := range blk.Lines {
			b.WriteString(l + "\n")
		}
		if qr != nil {
			code, err := qr(blk.QRData)
			if err != nil {
				return "", err
			}
			b.WriteString(code + "\n")
		}
		if pem {
			b.WriteString("\f\n")
		}
	}
	return b.String(), nil
}
