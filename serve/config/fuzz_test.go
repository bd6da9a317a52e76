package config

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; it fails with ErrInvalid and the file's
// name, or returns a configuration whose jobs all have a valid name, a
// schedule and a line. Seeds (the example, and the cases of TestErrors
// in shape) replay with every go test.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("../../contrib/serve.toml.example")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{
		string(example), gcJob, backupJob + "group = 'vm/1'\nsources = ['r.pxar:/']\n",
		"job = [{kind = 'gc', schedule = 'daily'}]\n",
		gcJob + "[job.params]\nx = 1\n", "[[stale]]\ngroup = 'vm/1'\nmax_age = '1d'\n",
		"[[notify.webhook]]\nurl = 'http://h'\nheaders = { a = 'b' }\n",
		"[notify.mail]\nto = ['a@b.c']\n", "store = 'x\n", "bogus = 1\n", "job = 5\n",
		"[http]\nlisten = 'off'\n", "a.b.c = 1\n", "[[job]]\n[[job]]\n", "\"\" = 1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("fuzz.toml", data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), "fuzz.toml") {
				t.Fatalf("error %v: not ErrInvalid naming the file", err)
			}
			return
		}
		for _, j := range c.Jobs {
			if j.Schedule == nil || !nameRE.MatchString(j.Name) || j.Line < 1 {
				t.Fatalf("job %+v", j)
			}
		}
	})
}
