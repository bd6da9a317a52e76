package cli

import (
	"crypto/rsa"
	"fmt"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/crypt/keyfile"
	"github.com/cairnfs/cairn/store"
)

// backupCrypt is how a backup is encrypted: its key (nil: a plain
// backup), the key file it came from, and the master public key the key
// file is wrapped for (nil: none).
type backupCrypt struct {
	key    *crypt.Key
	config *keyfile.Config
	master *rsa.PublicKey
}

// backupEncryption loads --keyfile (exactly one) and --master-pubkey,
// before any input is opened.
func (a *app) backupEncryption(o backupOpts) (backupCrypt, error) {
	key, c, err := a.backupKey()
	if err != nil {
		return backupCrypt{}, err
	}
	enc := backupCrypt{key: key, config: c}
	if o.masterPub == "" {
		return enc, nil
	}
	if key == nil {
		return enc, usageErr("--master-pubkey wraps the backup's key: give --keyfile too")
	}
	pemData, err := keyfile.ReadMaterial("master public key", o.masterPub)
	if err != nil {
		return enc, err
	}
	if enc.master, err = keyfile.ParseMasterPublic(o.masterPub, pemData); err != nil {
		return enc, err
	}
	return enc, nil
}

// start makes b an encrypted backup and stores the key file wrapped for
// the master key, as PBS's client does (the plain blob
// rsa-encrypted.key.blob), before any archive.
func (e backupCrypt) start(b *store.Backup) error {
	if e.key == nil {
		return nil
	}
	if err := b.Encrypt(e.key); err != nil {
		return err
	}
	if e.master == nil {
		return nil
	}
	wrapped, err := keyfile.WrapRSA(e.master, e.config)
	if err != nil {
		return err
	}
	blob, err := chunk.EncodeBlob(nil, wrapped, false)
	if err != nil {
		return fmt.Errorf("%s: %w", store.MasterKeyBlob, err)
	}
	return b.AddBlob(store.MasterKeyBlob, blob)
}
