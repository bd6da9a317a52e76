package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/crypt/keyfile"
	"github.com/cairnfs/cairn/store"
)

// envKeyfile lists key files (colon-separated, as PATH) for the commands
// that take --keyfile, when none is given on the command line.
const envKeyfile = "CAIRN_KEYFILE"

// keyOpts are the --keyfile and --password-file of the commands that
// read or write archive data; openStore loads the keys once and gives
// them to the store, run wipes them at exit.
type keyOpts struct {
	files   []string // --keyfile, in the order given
	pwFile  string   // --password-file: one passphrase for every key file
	wanted  bool     // the command has --keyfile
	loaded  bool     // load ran (keys may be nil: none given)
	keys    *store.Keys
	configs []*keyfile.Config // the loaded key files, as keys
	keepPW  bool              // mount --daemon: keep a passphrase typed at the terminal
	typedPW []byte            // that passphrase, for the daemon child
}

// keyfileFlags adds --keyfile and --password-file to cmd; single is
// backup's help text (backupKey refuses more than one key file).
func (a *app) keyfileFlags(cmd *cobra.Command, single bool) {
	what := "a key file of the encrypted snapshots to read (repeatable: each snapshot uses the one its manifest names; else $" + envKeyfile + ", colon-separated)"
	if single {
		what = "encrypt the backup with this key file (PBS's format; else $" + envKeyfile + ")"
	}
	cmd.Flags().StringArrayVar(&a.keyOpts.files, "keyfile", nil, what)
	cmd.Flags().StringVar(&a.keyOpts.pwFile, "password-file", "",
		"read the key files' passphrase from this file (else $"+envPasswordFile+" or the terminal)")
}

// keyFiles returns the key files the command was given: --keyfile, else
// $CAIRN_KEYFILE.
func (a *app) keyFiles() []string {
	if !a.keyOpts.wanted {
		return nil
	}
	if len(a.keyOpts.files) > 0 {
		return a.keyOpts.files
	}
	var out []string
	for _, p := range filepath.SplitList(a.getenv(envKeyfile)) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loadKeys loads the command's key files once (the passphrase read once
// too, for the first key file that needs one); nil when none was given.
func (a *app) loadKeys() (*store.Keys, error) {
	o := &a.keyOpts
	if o.loaded {
		return o.keys, nil
	}
	o.loaded = true
	files := a.keyFiles()
	if len(files) == 0 {
		return nil, nil
	}
	var pw []byte
	defer func() { clear(pw) }()
	pass := func() ([]byte, error) {
		if pw == nil {
			p, err := a.passphrase(o.pwFile, envPasswordFile, "passphrase of the key file(s)", false)
			if err != nil {
				return nil, err
			}
			pw = p
			if o.keepPW && o.pwFile == "" && a.getenv(envPasswordFile) == "" {
				o.typedPW = append([]byte(nil), p...)
			}
		}
		return append([]byte(nil), pw...), nil // Decrypt wipes its copy
	}
	ks, configs, err := keyfile.LoadAll(files, pass)
	if err != nil {
		return nil, err
	}
	o.configs = configs
	o.keys = store.NewKeys(ks...)
	return o.keys, nil
}

// wipeKeys wipes the keys the command loaded (run calls it at exit).
func (a *app) wipeKeys() {
	a.keyOpts.keys.Wipe()
}

// backupKey is the key a backup encrypts with and its key file (nil, nil:
// a plain backup).
func (a *app) backupKey() (*crypt.Key, *keyfile.Config, error) {
	if n := len(a.keyFiles()); n > 1 {
		return nil, nil, usageErr("%d key files given (--keyfile or $%s): a backup is encrypted with exactly one", n, envKeyfile)
	}
	ks, err := a.loadKeys()
	if err != nil || ks == nil {
		return nil, nil, err
	}
	all := ks.All()
	if len(all) != 1 {
		return nil, nil, errors.New("backup: no key loaded")
	}
	return all[0], a.keyOpts.configs[0], nil
}

// daemonPassphrase loads the key files in the parent of mount --daemon,
// so a failing key file fails there; a passphrase typed at its terminal
// goes to the child (whose stdin is /dev/null) through a pipe, returned
// for startDaemon (nil when none was typed).
func (a *app) daemonPassphrase() (*os.File, error) {
	a.keyOpts.keepPW = true
	_, err := a.loadKeys()
	pw := a.keyOpts.typedPW
	a.keyOpts.typedPW = nil
	defer clear(pw)
	if err != nil || pw == nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("--daemon: %w", err)
	}
	defer w.Close()
	if _, err := w.Write(pw); err != nil { // far less than a pipe holds
		r.Close()
		return nil, fmt.Errorf("--daemon: passing the passphrase on: %w", err)
	}
	return r, nil
}

// warnKeysDiffer warns when two snapshots compared by chunk digest are
// not under the same key (or one is plain): their digests are keyed, so
// the same data has different digests and every chunk compares unequal.
func warnKeysDiffer(a *app, s1 store.Snapshot, m1 *store.Manifest, s2 store.Snapshot, m2 *store.Manifest) {
	fp1, ok1, _ := m1.KeyFingerprint()
	fp2, ok2, _ := m2.KeyFingerprint()
	if ok1 == ok2 && fp1 == fp2 {
		return
	}
	short := func(fp crypt.Fingerprint, ok bool) string {
		if !ok {
			return "none (plain)"
		}
		return fp.Short()
	}
	a.logger.Warn("the snapshots are not encrypted with the same key: their chunk digests differ even where their data is the same, so images compare as wholly different",
		"from", s1.String(), "from_key", short(fp1, ok1), "to", s2.String(), "to_key", short(fp2, ok2))
}
