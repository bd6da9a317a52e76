package cli

import (
	"fmt"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/cairnfs/cairn/crypt/keyfile"
)

func (a *app) keyPaperkeyCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "paperkey FILE",
		Short: "print a key file or master private key for paper, as PBS's key paperkey",
		Long: "Prints FILE (a key file, or the encrypted PEM of a master private key) in PBS's\n" +
			"text paper key layout. With qrencode installed each block gets its QR code, as\n" +
			"PBS draws it (qrencode -t utf8i -m0 -s1 -lm); without it the text alone.\n" +
			"The key stays encrypted under its passphrase (a --kdf none key file does not).",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if format != "text" {
				return usageErr("--output-format %q: cairn prints text only", format)
			}
			data, err := keyfile.ReadMaterial("paper key", args[0])
			if err != nil {
				return err
			}
			defer clear(data)
			blocks, err := keyfile.Paperkey(args[0], data)
			if err != nil {
				return err
			}
			var qr func(string) (string, error)
			if path, err := exec.LookPath("qrencode"); err == nil {
				qr = func(d string) (string, error) { return keyfile.QREncode(path, d) }
			} else {
				a.logger.Warn("qrencode is not installed: the paper key has no QR codes")
			}
			text, err := keyfile.PaperkeyText(blocks, qr)
			if err != nil {
				return err
			}
			fmt.Fprint(a.stdout, text)
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "output-format", "text", "text (PBS's html is not supported)")
	return cmd
}
