package keyfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/internal/userfile"
)

// Passphrase returns the passphrase; the caller of Decrypt wipes it.
// Decrypt calls it only when the key file has a kdf.
type Passphrase func() ([]byte, error)

// Decrypt recovers the key; name is the file's name for errors. It checks
// the stored fingerprint against the key's (ErrFingerprint).
func (c *Config) Decrypt(name string, pass Passphrase) (*crypt.Key, error) {
	var raw []byte
	if c.Params.KDF == None {
		raw = append([]byte(nil), c.Data...)
	} else {
		if pass == nil {
			return nil, fmt.Errorf("key file %s: encrypted with %s, and no passphrase given: %w", name, c.Params.KDF, ErrPassphrase)
		}
		pw, err := pass()
		if err != nil {
			return nil, fmt.Errorf("key file %s: reading the passphrase: %w", name, err)
		}
		defer wipe(pw)
		if len(pw) < MinPassphrase {
			return nil, fmt.Errorf("key file %s: %w", name, ErrShortPassphrase)
		}
		wkey, err := c.Params.derive(pw)
		if err != nil {
			return nil, fmt.Errorf("key file %s: %w", name, err)
		}
		raw, err = unwrap(wkey, c.Data)
		wipe(wkey)
		if err != nil {
			if c.Hint != "" {
				return nil, fmt.Errorf("key file %s (password hint: %s): %w", name, c.Hint, err)
			}
			return nil, fmt.Errorf("key file %s: %w", name, err)
		}
	}
	defer wipe(raw)
	k, err := crypt.NewKey(raw)
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", name, err)
	}
	if c.Fingerprint != nil && *c.Fingerprint != k.Fingerprint() {
		k.Wipe()
		return nil, fmt.Errorf("key file %s: stored fingerprint %s, its key has %s: %w",
			name, c.Fingerprint.String(), k.Fingerprint().String(), ErrFingerprint)
	}
	return k, nil
}

// Read reads and parses the key file at path (no passphrase needed). A
// path that is not a regular file (a FIFO, a device, a directory) is
// refused without blocking or reading it (userfile.Open).
func Read(path string) (*Config, error) {
	f, _, err := userfile.Open(path, userfile.Pipe)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	defer wipe(buf) // a kdf-less file holds the key itself
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return Parse(path, buf)
}

// Load reads the key file at path and decrypts its key.
func Load(path string, pass Passphrase) (*crypt.Key, *Config, error) {
	c, err := Read(path)
	if err != nil {
		return nil, nil, err
	}
	k, err := c.Decrypt(path, pass)
	if err != nil {
		return nil, nil, err
	}
	return k, c, nil
}

// New makes the key file of key under passphrase with PBS's parameters for
// kdf (a fresh salt); with None the passphrase is unused and the key is
// stored in the clear, as PBS's `--kdf none`.
func New(key *crypt.Key, kdf KDF, passphrase []byte, now time.Time) (*Config, error) {
	p, err := defaultParams(kdf)
	if err != nil {
		return nil, err
	}
	return NewWithParams(key, p, passphrase, now)
}

// NewWithParams is New with explicit parameters (tests use small ones).
func NewWithParams(key *crypt.Key, p Params, passphrase []byte, now time.Time) (*Config, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	now = now.Truncate(time.Second)
	fp := key.Fingerprint()
	c := &Config{Params: p, Created: now, Modified: now, Fingerprint: &fp}
	raw := key.Export()
	defer wipe(raw)
	if p.KDF == None {
		c.Data = append([]byte(nil), raw...)
		return c, nil
	}
	if len(passphrase) < MinPassphrase {
		return nil, ErrShortPassphrase
	}
	wkey, err := p.derive(passphrase)
	if err != nil {
		return nil, err
	}
	defer wipe(wkey)
	if c.Data, err = wrap(wkey, raw); err != nil {
		return nil, err
	}
	return c, nil
}

// ChangePassphrase re-encrypts key under a new passphrase and kdf,
// keeping the creation time, as `proxmox-backup-client key
// change-passphrase` does.
func (c *Config) ChangePassphrase(key *crypt.Key, kdf KDF, passphrase []byte, now time.Time) (*Config, error) {
	n, err := New(key, kdf, passphrase, now)
	if err != nil {
		return nil, err
	}
	n.Created = c.Created
	n.Hint = ""
	return n, nil
}

// WriteNew writes c to path with mode 0600 through a temporary file in
// the same directory; it never replaces an existing file (a hard link
// publishes the file, and fails when path exists).
func (c *Config) WriteNew(path string) error {
	return c.write(path, false)
}

// Replace writes c over the key file at path (temporary file and rename).
func (c *Config) Replace(path string) error {
	return c.write(path, true)
}

func (c *Config) write(path string, replace bool) error {
	data, err := c.Marshal()
	if err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	defer wipe(data)
	return writeFile(path, data, replace)
}

// WriteNewFile writes data to a new file at path as WriteNew does (mode
// 0600, never replacing a file); for the master key's PEM files.
func WriteNewFile(path string, data []byte) error {
	return writeFile(path, data, false)
}

func writeFile(path string, data []byte, replace bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cairn-key-*")
	if err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	name := tmp.Name()
	defer os.Remove(name)
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if replace {
			err = os.Rename(name, path)
		} else {
			err = os.Link(name, path)
		}
	}
	if err != nil {
		return fmt.Errorf("key file %s: %w", path, err)
	}
	return nil
}
