package objstore

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"github.com/cairnfs/cairn/internal/userfile"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"syscall"
)

// maxCredentialsFile bounds what LoadCredentials reads.
const maxCredentialsFile = 64 << 10

// String shows the access key, never the secret or the session token.
func (c Credentials) String() string {
	return fmt.Sprintf("Credentials{AccessKey: %q, SecretKey: <redacted>, SessionToken: <redacted>}", c.AccessKey)
}

// GoString is String (%#v must not show the secret either).
func (c Credentials) GoString() string { return c.String() }

// LogValue keeps the secret out of slog.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// LoadCredentials reads keys from file (when not "") or from AWS_*.
//
// The file must be a regular file (not a symlink) owned by the current
// user and readable by it alone (no group or other permission bits). Its
// lines are KEY=VALUE: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN (or access_key, secret_key, session_token), with
// optional "export " and quotes; blank lines and # comments are skipped.
// A file in AWS's shared credentials format (~/.aws/credentials: [name]
// sections of "aws_access_key_id = …" lines) is read too, its section
// named by AWS_PROFILE, else [default] (other keys there, such as
// region, are passed over). Errors name the file and the line, never a
// value.
func LoadCredentials(file string) (Credentials, error) {
	if file == "" {
		return envCredentials()
	}
	data, err := readPrivateFile(file)
	if err != nil {
		return Credentials{}, err
	}
	c, err := parseCredentials(data)
	if err != nil {
		return Credentials{}, fmt.Errorf("credentials file %s: %w", file, err)
	}
	return c, nil
}

func envCredentials() (Credentials, error) {
	c := Credentials{
		AccessKey:    os.Getenv("AWS_ACCESS_KEY_ID"),
		SecretKey:    os.Getenv("AWS_SECRET_ACCESS_KEY"),
		SessionToken: os.Getenv("AWS_SESSION_TOKEN"),
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return Credentials{}, fmt.Errorf("no S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give a credentials file")
	}
	return c, nil
}

// readPrivateFile reads file after checking it is a regular file of the
// user's, private to it, and small.
func readPrivateFile(file string) ([]byte, error) {
	f, st, err := userfile.Open(file, userfile.NoFollow)
	if err != nil {
		var nr *userfile.NotRegularError
		if errors.As(err, &nr) && nr.Mode&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("credentials file %s: is a symlink (give the file itself)", file)
		}
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	defer f.Close()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return nil, fmt.Errorf("credentials file %s: owned by uid %d, not by this user (uid %d)", file, sys.Uid, os.Getuid())
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("credentials file %s: mode %04o lets others read it: chmod 600 %s", file, perm, file)
	}
	data, err := userfile.ReadAll(f, file, maxCredentialsFile)
	if err != nil {
		return nil, fmt.Errorf("credentials file: %w", err)
	}
	return data, nil
}

func parseCredentials(data []byte) (Credentials, error) {
	if sharedFormat(data) {
		return parseShared(data, cmp.Or(os.Getenv("AWS_PROFILE"), "default"))
	}
	var c Credentials
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxCredentialsFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Credentials{}, fmt.Errorf("line %d: not KEY=VALUE", n)
		}
		v = unquote(strings.TrimSpace(v))
		if strings.ContainsFunc(v, func(r rune) bool { return r < 0x21 || r == 0x7f }) || v == "" {
			return Credentials{}, fmt.Errorf("line %d: empty value or one with spaces or control characters", n)
		}
		switch strings.TrimSpace(k) {
		case "AWS_ACCESS_KEY_ID", "aws_access_key_id", "access_key":
			c.AccessKey = v
		case "AWS_SECRET_ACCESS_KEY", "aws_secret_access_key", "secret_key":
			c.SecretKey = v
		case "AWS_SESSION_TOKEN", "aws_session_token", "session_token":
			c.SessionToken = v
		default:
			return Credentials{}, fmt.Errorf("line %d: unknown key (want AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)", n)
		}
	}
	if err := sc.Err(); err != nil {
		return Credentials{}, err
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return Credentials{}, fmt.Errorf("no AWS_ACCESS_KEY_ID or no AWS_SECRET_ACCESS_KEY line")
	}
	return c, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
