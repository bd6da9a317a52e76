package backup

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/crypt/keyfile"
	"github.com/cairnfs/cairn/internal/passphrase"
)

// KeySource is where a backup job's key comes from: a key file in PBS's
// format and, for one protected by a passphrase, a file holding it. A
// job has no terminal to ask at, so a passphrase comes from the file or
// the run fails, naming both.
type KeySource struct {
	File         string // empty: the backup is not encrypted
	PasswordFile string
}

// check refuses what cannot be loaded wherever the job runs: relative
// paths (a control file's writer and the daemon do not share a working
// directory) and a passphrase without a key file.
func (k KeySource) check() error {
	for _, p := range [][2]string{{"keyfile", k.File}, {"password-file", k.PasswordFile}} {
		if p[1] != "" && !filepath.IsAbs(p[1]) {
			return fmt.Errorf("%s=%q: want an absolute path", p[0], p[1])
		}
	}
	if k.File == "" && k.PasswordFile != "" {
		return errors.New("password-file without keyfile")
	}
	return nil
}

// load reads and decrypts the key (nil when there is none); the caller
// wipes it.
func (k KeySource) load() (*crypt.Key, error) {
	if k.File == "" {
		return nil, nil
	}
	pass := func() ([]byte, error) {
		if k.PasswordFile == "" {
			return nil, fmt.Errorf("key file %s is protected by a passphrase: give password-file= (a job cannot ask for it)", k.File)
		}
		return passphrase.ReadFile(k.PasswordFile)
	}
	key, _, err := keyfile.Load(k.File, pass)
	if err != nil {
		return nil, fmt.Errorf("backup key: %w", err)
	}
	return key, nil
}
