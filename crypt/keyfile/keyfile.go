package keyfile

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairnfs/cairn/crypt"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrFormat: the file is not a well-formed key file.
	ErrFormat = errors.New("not a valid key file")
	// ErrKDF: the file names a key derivation function cairn does not know.
	ErrKDF = errors.New("unknown key derivation function")
	// ErrLimits: kdf parameters beyond what cairn will compute.
	ErrLimits = errors.New("key derivation parameters out of bounds")
	// ErrPassphrase: the passphrase does not decrypt the key.
	ErrPassphrase = errors.New("unable to decrypt key (wrong passphrase?)")
	// ErrShortPassphrase: PBS refuses passphrases under 5 bytes.
	ErrShortPassphrase = errors.New("passphrase is too short (at least 5 characters)")
	// ErrFingerprint: the stored fingerprint is not the key's.
	ErrFingerprint = errors.New("key file fingerprint does not match its key")
)

// MinPassphrase is PBS's minimum passphrase length in bytes.
const MinPassphrase = 5

// KDF names a key derivation function as the command line spells it.
type KDF string

// The key derivation functions.
const (
	Scrypt KDF = "scrypt"
	PBKDF2 KDF = "pbkdf2"
	None   KDF = "none"
)

// Params are a kdf's parameters; for None all are zero.
type Params struct {
	KDF     KDF
	N, R, P uint64 // scrypt
	Iter    uint64 // PBKDF2
	Salt    []byte
}

// Config is a parsed key file. Data is the (encrypted, with a kdf) key.
type Config struct {
	Params      Params
	Created     time.Time
	Modified    time.Time
	Data        []byte
	Fingerprint *crypt.Fingerprint // nil when the file has none
	Hint        string
}

type scryptJSON struct {
	N    uint64 `json:"n"`
	R    uint64 `json:"r"`
	P    uint64 `json:"p"`
	Salt string `json:"salt"`
}

type pbkdf2JSON struct {
	Iter uint64 `json:"iter"`
	Salt string `json:"salt"`
}

// fileJSON keeps PBS's field order (serde serialises in declaration order).
type fileJSON struct {
	KDF         json.RawMessage `json:"kdf"`
	Created     string          `json:"created"`
	Modified    string          `json:"modified"`
	Data        string          `json:"data"`
	Fingerprint *string         `json:"fingerprint,omitempty"`
	Hint        *string         `json:"hint,omitempty"`
}

// maxFile bounds what Parse accepts: a key file is a few hundred bytes.
const maxFile = 64 << 10

// Parse decodes a key file's JSON; name is the file's name for errors.
func Parse(name string, data []byte) (*Config, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("key file %s: %s: %w", name, fmt.Sprintf(format, a...), ErrFormat)
	}
	if len(data) > maxFile {
		return nil, bad("%d bytes, a key file has a few hundred", len(data))
	}
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, bad("%v", err)
	}
	if f.KDF == nil || f.Created == "" || f.Modified == "" || f.Data == "" {
		return nil, bad("missing kdf, created, modified or data")
	}
	c := &Config{}
	var err error
	if c.Params, err = parseKDF(name, f.KDF); err != nil {
		return nil, err
	}
	if c.Created, err = time.Parse(time.RFC3339, f.Created); err != nil {
		return nil, bad("created: %v", err)
	}
	if c.Modified, err = time.Parse(time.RFC3339, f.Modified); err != nil {
		return nil, bad("modified: %v", err)
	}
	if c.Data, err = base64.StdEncoding.DecodeString(f.Data); err != nil {
		return nil, bad("data: bad base64: %v", err)
	}
	want := crypt.KeySize
	if c.Params.KDF != None {
		want = crypt.IVSize + crypt.TagSize + crypt.KeySize
	}
	if len(c.Data) != want {
		return nil, bad("data is %d bytes, want %d (truncated?)", len(c.Data), want)
	}
	if f.Fingerprint != nil {
		fp, err := crypt.ParseFingerprint(*f.Fingerprint)
		if err != nil {
			return nil, bad("fingerprint: %v", err)
		}
		c.Fingerprint = &fp
	}
	if f.Hint != nil {
		c.Hint = *f.Hint
	}
	return c, nil
}

func parseKDF(name string, raw json.RawMessage) (Params, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return Params{KDF: None}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 1 {
		return Params{}, fmt.Errorf("key file %s: kdf is not null or one of {\"Scrypt\": …}, {\"PBKDF2\": …}: %w", name, ErrFormat)
	}
	var p Params
	var salt string
	switch {
	case m["Scrypt"] != nil:
		var s scryptJSON
		if err := strictUnmarshal(m["Scrypt"], &s); err != nil {
			return Params{}, fmt.Errorf("key file %s: kdf Scrypt: %v: %w", name, err, ErrFormat)
		}
		p, salt = Params{KDF: Scrypt, N: s.N, R: s.R, P: s.P}, s.Salt
	case m["PBKDF2"] != nil:
		var s pbkdf2JSON
		if err := strictUnmarshal(m["PBKDF2"], &s); err != nil {
			return Params{}, fmt.Errorf("key file %s: kdf PBKDF2: %v: %w", name, err, ErrFormat)
		}
		p, salt = Params{KDF: PBKDF2, Iter: s.Iter}, s.Salt
	default:
		for k := range m {
			return Params{}, fmt.Errorf("key file %s: kdf %q: %w", name, k, ErrKDF)
		}
	}
	var err error
	if p.Salt, err = base64.StdEncoding.DecodeString(salt); err != nil {
		return Params{}, fmt.Errorf("key file %s: kdf salt: bad base64: %v: %w", name, err, ErrFormat)
	}
	if err := p.check(); err != nil {
		return Params{}, fmt.Errorf("key file %s: %w", name, err)
	}
	return p, nil
}

func strictUnmarshal(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// Marshal encodes c as PBS writes a key file (compact JSON).
func (c *Config) Marshal() ([]byte, error) {
	f := fileJSON{
		Created:  c.Created.Format(time.RFC3339),
		Modified: c.Modified.Format(time.RFC3339),
		Data:     base64.StdEncoding.EncodeToString(c.Data),
	}
	salt := base64.StdEncoding.EncodeToString(c.Params.Salt)
	var kdf any
	switch c.Params.KDF {
	case Scrypt:
		kdf = map[string]scryptJSON{"Scrypt": {c.Params.N, c.Params.R, c.Params.P, salt}}
	case PBKDF2:
		kdf = map[string]pbkdf2JSON{"PBKDF2": {c.Params.Iter, salt}}
	case None:
	default:
		return nil, fmt.Errorf("kdf %q: %w", c.Params.KDF, ErrKDF)
	}
	var err error
	if f.KDF, err = json.Marshal(kdf); err != nil {
		return nil, err
	}
	if c.Fingerprint != nil {
		s := c.Fingerprint.String()
		f.Fingerprint = &s
	}
	if c.Hint != "" {
		f.Hint = &c.Hint
	}
	return encode(f, "")
}

// encode writes JSON as serde_json does: no HTML escaping (Go's default
// turns <, > and & into \u003c…), compact or indented by indent.
func encode(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.SetIndent("", indent)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
