package objstore

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// sharedFormat: the first line that is not blank or a comment opens a
// [section], as AWS's shared credentials file does.
func sharedFormat(data []byte) bool {
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		return line[0] == '['
	}
	return false
}

// parseShared reads the keys of section profile of a shared credentials
// file.
func parseShared(data []byte, profile string) (Credentials, error) {
	var c Credentials
	found, in := false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxCredentialsFile)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			name, ok := strings.CutSuffix(line[1:], "]")
			if !ok {
				return Credentials{}, fmt.Errorf("line %d: a section header without its ]", n)
			}
			name = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), "profile "))
			in = name == profile
			found = found || in
			continue
		}
		if !in {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return Credentials{}, fmt.Errorf("line %d: not key = value", n)
		}
		v = unquote(strings.TrimSpace(v))
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "aws_access_key_id":
			c.AccessKey = v
		case "aws_secret_access_key":
			c.SecretKey = v
		case "aws_session_token":
			c.SessionToken = v
		default:
			continue // region, output, …
		}
		if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r < 0x21 || r == 0x7f }) {
			return Credentials{}, fmt.Errorf("line %d: empty value or one with spaces or control characters", n)
		}
	}
	if err := sc.Err(); err != nil {
		return Credentials{}, err
	}
	if !found {
		return Credentials{}, fmt.Errorf("no [%s] section (AWS_PROFILE names the section; [default] without it)", profile)
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return Credentials{}, fmt.Errorf("[%s]: no aws_access_key_id or no aws_secret_access_key", profile)
	}
	return c, nil
}
