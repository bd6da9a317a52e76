package test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/test/e2e"
)

// TestInitS3 runs `cairn init --s3` with the binary against a real MinIO:
// a store in a bucket, keys from AWS_* variables; a second directory on
// the same prefix attaches to it and reads what the first backed up;
// wrong keys, a missing bucket, a credentials file others can read and
// missing flags are refused with a clear error that never shows the
// secret, and nothing is created.
func TestInitS3(t *testing.T) {
	t.Parallel() // no mount, its own stores and bucket: beside the other S3 and sync tests
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	url := "s3://" + bucket + "/stores/one"
	env := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=" + srv.SecretKey}
	tmp := t.TempDir()
	one, two := filepath.Join(tmp, "one"), filepath.Join(tmp, "two")
	s3 := []string{"--s3", url, "--endpoint", srv.Endpoint, "--path-style", "--region", "us-east-1"}

	r := e2e.Cairn(t, env, append([]string{"--store", one, "init", "--cache-size", "64M"}, s3...)...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "created store") || !strings.Contains(r.Stdout, url) {
		t.Fatalf("init: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	path, data := e2e.SparseImage(t, 5<<20, 7)
	if r := e2e.Cairn(t, env, "--store", one, "backup", "--type", "vm", "--id", "7", "--chunk-size", "1M", "disk.img:"+path); r.Code != 0 {
		t.Fatalf("backup: exit %d\n%s", r.Code, r.Stderr)
	}
	// a second host's directory on the same prefix, keys from a file
	creds := filepath.Join(tmp, "creds")
	if err := os.WriteFile(creds, []byte("AWS_ACCESS_KEY_ID="+srv.AccessKey+"\nAWS_SECRET_ACCESS_KEY="+srv.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = e2e.Cairn(t, nil, append([]string{"--store", two, "init", "--credentials-file", creds}, s3...)...)
	if r.Code != 0 || !strings.Contains(r.Stdout, "attached") {
		t.Fatalf("init of a second directory: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
	out := e2e.Cairn(t, nil, "--store", two, "cat", "vm/7", "disk.img")
	if out.Code != 0 || !bytes.Equal([]byte(out.Stdout), data) {
		t.Fatalf("cat through the second directory: exit %d, %d bytes (want %d)\n%s", out.Code, len(out.Stdout), len(data), out.Stderr)
	}

	os.WriteFile(filepath.Join(tmp, "open-creds"), []byte("AWS_ACCESS_KEY_ID=a\nAWS_SECRET_ACCESS_KEY=b\n"), 0o644)
	wrongEnv := []string{"AWS_ACCESS_KEY_ID=" + srv.AccessKey, "AWS_SECRET_ACCESS_KEY=not-the-secret-xyz"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"wrong keys", wrongEnv, s3, 1, "access denied"},
		{"no bucket", env, []string{"--s3", "s3://no-such-bucket-0/x", "--endpoint", srv.Endpoint, "--path-style"}, 1, "no-such-bucket-0"},
		{"no keys", []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}, s3, 1, "AWS_ACCESS_KEY_ID"},
		{"open credentials file", nil, append([]string{"--credentials-file", filepath.Join(tmp, "open-creds")}, s3...), 1, "open-creds"},
		{"no endpoint", env, []string{"--s3", url}, 2, "--endpoint"},
		{"endpoint alone", env, []string{"--endpoint", srv.Endpoint}, 2, "--s3"},
		{"bad url", env, []string{"--s3", "http://x/y", "--endpoint", srv.Endpoint}, 2, "--s3"},
		{"bad cache size", env, append([]string{"--cache-size", "lots"}, s3...), 2, "--cache-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			r := e2e.Cairn(t, tc.env, append([]string{"--store", dir, "init"}, tc.args...)...)
			t.Log(strings.TrimSpace(r.Stderr))
			if r.Code != tc.code || !strings.Contains(r.Stderr, tc.want) {
				t.Fatalf("exit %d (want %d), stderr %q: want it to say %q", r.Code, tc.code, r.Stderr, tc.want)
			}
			if strings.Contains(r.Stderr+r.Stdout, srv.SecretKey) || strings.Contains(r.Stderr+r.Stdout, "not-the-secret-xyz") {
				t.Fatalf("output shows a secret: %s", r.Stderr)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Fatalf("%s created: %v", dir, err)
			}
		})
	}
}
