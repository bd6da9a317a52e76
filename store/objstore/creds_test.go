package objstore_test

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/store/objstore"
)

const secret = "s3cr3t/Value+xyz"

// A good 0600 file in both spellings; the env when no file is given.
func TestLoadCredentials(t *testing.T) {
	dir := t.TempDir()
	for i, body := range []string{
		"AWS_ACCESS_KEY_ID=AKID\nAWS_SECRET_ACCESS_KEY=" + secret + "\n",
		"# comment\n\nexport access_key=\"AKID\"\nsecret_key='" + secret + "'\nsession_token=tok\n",
	} {
		f := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := objstore.LoadCredentials(f)
		if err != nil || c.AccessKey != "AKID" || c.SecretKey != secret {
			t.Fatalf("file %d: %+v %v", i, c, err)
		}
		for _, s := range []string{c.String(), fmt.Sprintf("%v %+v %#v %s", c, c, c, c), fmt.Sprint(struct{ C objstore.Credentials }{c})} {
			if strings.Contains(s, secret) || c.SessionToken != "" && strings.Contains(s, c.SessionToken) {
				t.Fatalf("printed credentials show the secret: %s", s)
			}
		}
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "ENVKEY")
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	if c, err := objstore.LoadCredentials(""); err != nil || c.AccessKey != "ENVKEY" || c.SecretKey != secret {
		t.Fatalf("env: %+v %v", c, err)
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	if _, err := objstore.LoadCredentials(""); err == nil || !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("env without a secret: %v", err)
	}
}

// Files refused: readable by others, a symlink, a directory, a FIFO,
// too large, garbage, a missing key; errors name the file and never show
// a value.
func TestLoadCredentialsHostile(t *testing.T) {
	dir := t.TempDir()
	good := "AWS_ACCESS_KEY_ID=AKID\nAWS_SECRET_ACCESS_KEY=" + secret + "\n"
	write := func(name, body string, mode os.FileMode) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, mode); err != nil {
			t.Fatal(err)
		}
		return f
	}
	target := write("target", good, 0o600)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cases := map[string]string{
		sock:                         "is a socket, not a regular file",
		"/dev/zero":                  "not a regular file",
		write("world", good, 0o644):  "0644",
		write("group", good, 0o640):  "0640",
		link:                         "symlink",
		dir:                          "not a regular file",
		fifo:                         "is a FIFO, not a regular file",
		filepath.Join(dir, "absent"): "no such file",
		write("big", strings.Repeat("#"+secret+"\n", 10000), 0o600):                   "larger",
		write("garbage", "AWS_SECRET_ACCESS_KEY "+secret+"\n", 0o600):                 "line 1",
		write("unknown", "AWS_SECRET_KEY="+secret+"\n", 0o600):                        "unknown key",
		write("nokey", "AWS_SECRET_ACCESS_KEY="+secret+"\n", 0o600):                   "no AWS_ACCESS_KEY_ID",
		write("space", "AWS_ACCESS_KEY_ID=a b\nAWS_SECRET_ACCESS_KEY="+secret, 0o600): "line 1",
		write("binary", "\x00\xff"+secret, 0o600):                                     "line 1",
	}
	if os.Getuid() == 0 { // a file of another user (only root can make one)
		foreign := write("foreign", good, 0o600)
		if err := os.Chown(foreign, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		cases[foreign] = "owned by uid 65534"
	}
	for f, want := range cases {
		_, err := objstore.LoadCredentials(f)
		if err == nil {
			t.Errorf("%s accepted", f)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, want) || !strings.Contains(msg, f) || strings.Contains(msg, secret) {
			t.Errorf("%s: %q (want %q, the file's name, no secret)", f, msg, want)
		}
	}
}

// AWS's shared credentials format: the section AWS_PROFILE names, else
// [default]; other keys passed over; errors name the file, never a value.
func TestLoadCredentialsShared(t *testing.T) {
	dir := t.TempDir()
	file := func(body string) string {
		f := filepath.Join(dir, "credentials")
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	shared := "# comment\n; another\n[default]\naws_access_key_id = AKDEFAULT\naws_secret_access_key=" + secret + "\nregion = eu-west-1\n\n[profile work]\naws_access_key_id = AKWORK\naws_secret_access_key = " + secret + "\naws_session_token = TOKEN\n"
	for _, c := range []struct {
		profile, body, want, err string
	}{
		{"", shared, "AKDEFAULT", ""},
		{"work", shared, "AKWORK", ""},
		{"absent", shared, "", "no [absent] section"},
		{"", "[default]\naws_access_key_id = A\n", "", "no aws_access_key_id or no aws_secret_access_key"},
		{"", "[default\naws_access_key_id = A\n", "", "line 1: a section header"},
		{"", "[default]\naws_access_key_id = A B\naws_secret_access_key = " + secret + "\n", "", "line 2: empty value"},
		{"", "[default]\njunk\n", "", "line 2: not key = value"},
		{"", "[other]\naws_access_key_id = A\naws_secret_access_key = " + secret + "\n", "", "no [default] section"},
	} {
		t.Setenv("AWS_PROFILE", c.profile)
		f := file(c.body)
		cred, err := objstore.LoadCredentials(f)
		if c.err == "" {
			if err != nil || cred.AccessKey != c.want || cred.SecretKey != secret {
				t.Errorf("profile %q: %v, %v; want %s", c.profile, cred, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), f) || strings.Contains(err.Error(), secret) {
			t.Errorf("profile %q body %q: %v, want %q naming the file, no secret", c.profile, c.body, err, c.err)
		}
	}
}
