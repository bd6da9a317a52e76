package passphrase

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cairnfs/cairn/internal/userfile"
	"golang.org/x/term"
)

// Max bounds a passphrase file's first line.
const Max = 4096

// Read reads a passphrase from file (a flag's value), else the file the
// environment variable env names, else the terminal stdin is (twice when
// confirm), prompting on stderr. The caller wipes it.
func Read(file, env string, stdin io.Reader, stderr io.Writer, prompt string, confirm bool) ([]byte, error) {
	if file == "" {
		file = os.Getenv(env)
	}
	if file != "" {
		return ReadFile(file)
	}
	f, ok := stdin.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil, fmt.Errorf("no passphrase: standard input is not a terminal; give --password-file or $%s", env)
	}
	fmt.Fprintf(stderr, "%s: ", prompt)
	pw, err := term.ReadPassword(int(f.Fd()))
	fmt.Fprintln(stderr)
	if err != nil {
		return nil, fmt.Errorf("reading the passphrase: %w", err)
	}
	if confirm {
		fmt.Fprintf(stderr, "%s (again): ", prompt)
		again, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(stderr)
		defer clear(again)
		if err != nil {
			clear(pw)
			return nil, fmt.Errorf("reading the passphrase: %w", err)
		}
		if string(again) != string(pw) {
			clear(pw)
			return nil, errors.New("the passphrases do not match")
		}
	}
	return pw, nil
}

// ReadFile returns the first line of file (without its line
// end); a passphrase file may end in a newline or not. What is not a
// regular file (a FIFO, a device) is refused without blocking.
func ReadFile(file string) ([]byte, error) {
	f, _, err := userfile.Open(file, userfile.Pipe)
	if err != nil {
		return nil, fmt.Errorf("passphrase file: %w", err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, Max+2))
	if err != nil {
		clear(buf)
		return nil, fmt.Errorf("passphrase file %s: %w", file, err)
	}
	n := len(buf)
	for i, c := range buf {
		if c == '\n' {
			n = i
			break
		}
	}
	if n > 0 && buf[n-1] == '\r' {
		n--
	}
	if n > Max {
		clear(buf)
		return nil, fmt.Errorf("passphrase file %s: first line longer than %d bytes", file, Max)
	}
	pw := append([]byte(nil), buf[:n]...)
	clear(buf)
	return pw, nil
}
