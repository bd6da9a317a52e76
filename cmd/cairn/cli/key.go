package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/crypt/keyfile"
	"github.com/cairnfs/cairn/internal/passphrase"
	"github.com/spf13/cobra"
)

// envPasswordFile names the file the key's passphrase is read from when
// --password-file is not given; envNewPasswordFile the new passphrase of
// change-passphrase. A passphrase is never a command-line argument.
const (
	envPasswordFile    = "CAIRN_KEY_PASSWORD_FILE"
	envNewPasswordFile = "CAIRN_KEY_NEW_PASSWORD_FILE"
)

func (a *app) keyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "key",
		Short: "manage encryption key files (Proxmox Backup Server's format)",
		Long: "Creates and inspects the key files of client-side encryption. They are PBS's\n" +
			"key files: a key made by proxmox-backup-client works here and the other way round.\n" +
			"A passphrase comes from the terminal, or from the file --password-file or\n" +
			envPasswordFile + " names (its first line); never from an argument.",
	}
	cmd.AddCommand(a.keyCreateCmd(), a.keyShowCmd(), a.keyChangeCmd(), a.keyPaperkeyCmd(), a.keyCreateMasterCmd(), a.keyRecoverCmd())
	return cmd
}

func (a *app) keyCreateCmd() *cobra.Command {
	var kdf, pwFile, hint string
	cmd := &cobra.Command{
		Use:   "create FILE",
		Short: "create a new random encryption key in a new key file",
		Long: "Creates a random AES-256 key and writes it to FILE (mode 0600; an existing\n" +
			"file is never replaced), encrypted under a passphrase with --kdf scrypt (the\n" +
			"default) or pbkdf2 as PBS does, or in the clear with --kdf none.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			k := keyfile.KDF(kdf)
			if k != keyfile.Scrypt && k != keyfile.PBKDF2 && k != keyfile.None {
				return usageErr("--kdf %q: use scrypt, pbkdf2 or none", kdf)
			}
			if _, err := os.Lstat(args[0]); err == nil {
				return fmt.Errorf("key file %s exists already; cairn does not replace key files", args[0])
			}
			var pw []byte
			if k != keyfile.None {
				var err error
				if pw, err = a.passphrase(pwFile, envPasswordFile, "passphrase for the new key", true); err != nil {
					return err
				}
				defer clear(pw)
			}
			key, err := crypt.GenerateKey()
			if err != nil {
				return err
			}
			defer key.Wipe()
			c, err := keyfile.New(key, k, pw, time.Now())
			if err != nil {
				return fmt.Errorf("key file %s: %w", args[0], err)
			}
			if k != keyfile.None {
				c.Hint = hint
			}
			if err := c.WriteNew(args[0]); err != nil {
				return err
			}
			if !a.quiet {
				fmt.Fprintf(a.stdout, "created key file %s, fingerprint %s\n", args[0], key.Fingerprint())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kdf, "kdf", "scrypt", "key derivation: scrypt, pbkdf2 or none (no passphrase)")
	cmd.Flags().StringVar(&hint, "hint", "", "a password hint stored in the key file (in the clear)")
	cmd.Flags().StringVar(&pwFile, "password-file", "", "read the passphrase from this file (else $"+envPasswordFile+" or the terminal)")
	return cmd
}

// keyInfo is what key show prints, with --json as these keys.
type keyInfo struct {
	Path        string `json:"path"`
	KDF         string `json:"kdf"`
	Created     string `json:"created"`
	Modified    string `json:"modified"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Hint        string `json:"hint,omitempty"`
}

func (a *app) keyShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "show a key file's kdf, times and fingerprint (no passphrase needed)",
		Long: `Prints a key file's key derivation function (scrypt, pbkdf2 or none),
its creation and modification times, its password hint and its key's
fingerprint, which snapshots encrypted with it record in their manifest.
The passphrase is not needed: the fingerprint is stored in the file.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			c, err := keyfile.Read(args[0])
			if err != nil {
				return err
			}
			info := keyInfo{Path: args[0], KDF: string(c.Params.KDF), Hint: c.Hint,
				Created: c.Created.UTC().Format(time.RFC3339), Modified: c.Modified.UTC().Format(time.RFC3339)}
			if c.Fingerprint != nil {
				info.Fingerprint = c.Fingerprint.String()
			}
			if asJSON {
				b, err := json.MarshalIndent(info, "", "  ")
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%s\n", b)
				return nil
			}
			fp := info.Fingerprint
			if fp == "" {
				fp = "- (the key file records none)"
			}
			fmt.Fprintf(a.stdout, "path:        %s\nkdf:         %s\ncreated:     %s\nmodified:    %s\nfingerprint: %s\n",
				info.Path, info.KDF, info.Created, info.Modified, fp)
			if info.Hint != "" {
				fmt.Fprintf(a.stdout, "hint:        %s\n", info.Hint)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) keyChangeCmd() *cobra.Command {
	var kdf, pwFile, newFile, hint string
	cmd := &cobra.Command{
		Use:   "change-passphrase FILE",
		Short: "encrypt a key file's key under a new passphrase",
		Long: "Decrypts FILE's key with its passphrase and writes it again under a new one\n" +
			"(--kdf scrypt or pbkdf2), keeping its creation time, as PBS does. The new\n" +
			"passphrase comes from the terminal or the file --new-password-file or\n" +
			"$" + envNewPasswordFile + " names.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			k := keyfile.KDF(kdf)
			if k != keyfile.Scrypt && k != keyfile.PBKDF2 {
				return usageErr("--kdf %q: use scrypt or pbkdf2", kdf)
			}
			path := args[0]
			key, c, err := keyfile.Load(path, func() ([]byte, error) {
				return a.passphrase(pwFile, envPasswordFile, "passphrase of "+path, false)
			})
			if err != nil {
				return err
			}
			defer key.Wipe()
			pw, err := a.passphrase(newFile, envNewPasswordFile, "new passphrase", true)
			if err != nil {
				return err
			}
			defer clear(pw)
			n, err := c.ChangePassphrase(key, k, pw, time.Now())
			if err != nil {
				return fmt.Errorf("key file %s: %w", path, err)
			}
			n.Hint = hint
			if err := n.Replace(path); err != nil {
				return err
			}
			if !a.quiet {
				fmt.Fprintf(a.stdout, "changed the passphrase of key file %s\n", path)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kdf, "kdf", "scrypt", "key derivation for the new passphrase: scrypt or pbkdf2")
	cmd.Flags().StringVar(&hint, "hint", "", "a password hint for the new passphrase (in the clear; the old hint goes)")
	cmd.Flags().StringVar(&pwFile, "password-file", "", "read the current passphrase from this file (else $"+envPasswordFile+" or the terminal)")
	cmd.Flags().StringVar(&newFile, "new-password-file", "", "read the new passphrase from this file (else $"+envNewPasswordFile+" or the terminal)")
	return cmd
}

// passphrase reads a passphrase from file (the flag), else the file the
// environment variable env names, else the terminal (twice when confirm):
// passphrase.Read. The caller wipes it.
func (a *app) passphrase(file, env, prompt string, confirm bool) ([]byte, error) {
	return passphrase.Read(cmp.Or(file, a.getenv(env)), env, a.stdin, a.stderr, prompt, confirm)
}
