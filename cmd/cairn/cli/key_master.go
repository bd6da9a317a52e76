package cli

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"os"

	"github.com/cairnfs/cairn/crypt/keyfile"
	"github.com/cairnfs/cairn/store"
	"github.com/spf13/cobra"
)

// envMasterPasswordFile names the file the master key's passphrase is read
// from when --master-password-file is not given.
const envMasterPasswordFile = "CAIRN_MASTER_PASSWORD_FILE"

func (a *app) keyCreateMasterCmd() *cobra.Command {
	var pwFile string
	cmd := &cobra.Command{
		Use:   "create-master PREFIX",
		Short: "create an RSA master key pair: PREFIX-private.pem and PREFIX-public.pem",
		Long: "Creates a 4096-bit RSA key pair as PBS's create-master-key: PREFIX-private.pem,\n" +
			"the private key as PKCS#8 PEM encrypted under a passphrase (keep it offline), and\n" +
			"PREFIX-public.pem. A backup made with the public key carries its key file wrapped\n" +
			"for it (PBS's rsa-encrypted.key.blob); `cairn key recover` unwraps it with the\n" +
			"private key. Neither file is ever replaced.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			privPath, pubPath := args[0]+"-private.pem", args[0]+"-public.pem"
			for _, p := range []string{privPath, pubPath} {
				if _, err := os.Lstat(p); err == nil {
					return fmt.Errorf("%s exists already; cairn does not replace key files", p)
				}
			}
			pw, err := a.passphrase(pwFile, envMasterPasswordFile, "passphrase for the master key", true)
			if err != nil {
				return err
			}
			defer clear(pw)
			priv, err := rsa.GenerateKey(rand.Reader, keyfile.MasterBits)
			if err != nil {
				return err
			}
			privPEM, pubPEM, err := keyfile.MarshalMaster(priv, pw)
			if err != nil {
				return fmt.Errorf("master key %s: %w", privPath, err)
			}
			if err := keyfile.WriteNewFile(privPath, privPEM); err != nil {
				return err
			}
			if err := keyfile.WriteNewFile(pubPath, pubPEM); err != nil {
				return err
			}
			if !a.quiet {
				fmt.Fprintf(a.stdout, "created master key %s and %s\n", privPath, pubPath)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&pwFile, "master-password-file", "", "read the master key's passphrase from this file (else $"+envMasterPasswordFile+" or the terminal)")
	return cmd
}

func (a *app) keyRecoverCmd() *cobra.Command {
	var master, pwFile, snapshot string
	cmd := &cobra.Command{
		Use:   "recover --master-key PRIVATE.pem (BLOB | --snapshot SNAPSHOT) OUT",
		Short: "recover a key file wrapped for the master key (rsa-encrypted.key.blob)",
		Long: "Decrypts BLOB (a key file wrapped for the master public key, PBS's\n" +
			"rsa-encrypted.key.blob, as 'cairn cat SNAPSHOT rsa-encrypted.key.blob' writes it)\n" +
			"or, with --snapshot, the one a snapshot of the store (--store) carries, made by\n" +
			"'cairn backup --keyfile K --master-pubkey PUBLIC.pem'. It needs the private master\n" +
			"key and writes the key file to the new file OUT, as it was (still under its own\n" +
			"passphrase; cairn key change-passphrase gives it a new one).",
		Args: cobra.RangeArgs(1, 2),
		RunE: func(_ *cobra.Command, args []string) error {
			if master == "" {
				return usageErr("recover needs --master-key PRIVATE.pem")
			}
			if (snapshot == "") != (len(args) == 2) {
				return usageErr("recover takes BLOB OUT, or --snapshot SNAPSHOT OUT")
			}
			out := args[len(args)-1]
			if _, err := os.Lstat(out); err == nil {
				return fmt.Errorf("key file %s exists already; cairn does not replace key files", out)
			}
			pemData, err := keyfile.ReadMaterial("master key", master)
			if err != nil {
				return err
			}
			name, blob, err := a.wrappedKey(snapshot, args)
			if err != nil {
				return err
			}
			pw, err := a.passphrase(pwFile, envMasterPasswordFile, "passphrase of "+master, false)
			if err != nil {
				return err
			}
			defer clear(pw)
			priv, err := keyfile.ParseMasterPrivate(master, pemData, pw)
			if err != nil {
				return err
			}
			c, err := keyfile.UnwrapRSA(priv, name, blob)
			if err != nil {
				return err
			}
			if err := c.WriteNew(out); err != nil {
				return err
			}
			if !a.quiet {
				fp := "-"
				if c.Fingerprint != nil {
					fp = c.Fingerprint.String()
				}
				fmt.Fprintf(a.stdout, "recovered key file %s, fingerprint %s\n", out, fp)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&master, "master-key", "", "the private master key (PEM) the blob was wrapped for")
	cmd.Flags().StringVar(&snapshot, "snapshot", "", "read the wrapped key from this snapshot of the store: [ns/NAME/…]TYPE/ID/TIME|latest")
	cmd.Flags().StringVar(&pwFile, "master-password-file", "", "read the master key's passphrase from this file (else $"+envMasterPasswordFile+" or the terminal)")
	return cmd
}

// wrappedKey reads the wrapped key file: the file args[0], or the
// rsa-encrypted.key.blob of snapshot (no key needed: it is a plain blob).
func (a *app) wrappedKey(snapshot string, args []string) (name string, blob []byte, err error) {
	if snapshot == "" {
		if blob, err = keyfile.ReadMaterial("wrapped key", args[0]); err != nil {
			return "", nil, err
		}
		return args[0], blob, nil
	}
	s, err := a.openStore()
	if err != nil {
		return "", nil, err
	}
	defer s.Close()
	snap, m, err := a.resolveSnapshot(s, snapshot)
	if err != nil {
		return "", nil, err
	}
	name = snap.String() + "/" + store.MasterKeyBlob
	if _, ok := m.File(store.MasterKeyBlob); !ok {
		return "", nil, fmt.Errorf("snapshot %s has no %s: it was not backed up with --master-pubkey", snap, store.MasterKeyBlob)
	}
	blob, err = s.ReadBlob(snap, m, store.MasterKeyBlob)
	return name, blob, err
}
