package keyfile

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"

	"github.com/cairnfs/cairn/crypt"
	"github.com/cairnfs/cairn/internal/userfile"
)

// LoadAll loads key files in order with Load (pass is asked by each key
// file that needs a passphrase). On an error the keys loaded so far are
// wiped and the error names the file.
func LoadAll(files []string, pass Passphrase) ([]*crypt.Key, []*Config, error) {
	var ks []*crypt.Key
	var cs []*Config
	for _, f := range files {
		k, c, err := Load(f, pass)
		if err != nil {
			for _, k := range ks {
				k.Wipe()
			}
			if !strings.Contains(err.Error(), f) {
				err = fmt.Errorf("key file %s: %w", f, err)
			}
			return nil, nil, err
		}
		ks, cs = append(ks, k), append(cs, c)
	}
	return ks, cs, nil
}

// MaxMaterial bounds the other key files cairn reads whole: the
// master key's PEM files (an encrypted 4096-bit private key is about
// 3.3 KB), a wrapped key file (one RSA block), paperkey's input.
const MaxMaterial = 64 << 10

// ReadMaterial reads one of those files; what names it in errors. What
// is not a regular file is refused without blocking (userfile.Open).
func ReadMaterial(what, path string) ([]byte, error) {
	b, err := userfile.Read(path, MaxMaterial, userfile.Pipe)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return b, nil
}

// QREncode draws data as PBS does with the qrencode program at path; the data goes in on stdin, never as an
// argument.
func QREncode(path, data string) (string, error) {
	cmd := exec.Command(path, "-t", "utf8i", "-m0", "-s1", "-lm", "--output", "-")
	cmd.Stdin = strings.NewReader(data)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("qrencode: %v: %s", err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil // PBS prints it with its newline and one more
}
