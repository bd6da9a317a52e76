package backupsrc

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpecs(t *testing.T) {
	got, err := ParseSpecs([]string{"root.pxar:/", "disk.img:-", "conf.blob:/etc/x:y"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Spec{{"root.pxar", "/"}, {"disk.img", "-"}, {"conf.blob", "/etc/x:y"}}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("spec %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"root:/"}, "want NAME.img:PATH"},
		{[]string{"root.tar:/"}, "want NAME.img:PATH"},
		{[]string{"root.pxar"}, "want NAME.img:PATH"},
		{[]string{"root.pxar:"}, "want NAME.img:PATH"},
		{[]string{":/x"}, "want NAME.img:PATH"},
		{[]string{"a/b.img:/x"}, "plain file name"},
		{[]string{".x.img:/x"}, "plain file name"},
		{[]string{"index.json.blob:/x"}, "reserved for the snapshot's manifest"},
		{[]string{"client.log.blob:/x"}, "reserved for PBS's client log"},
		{[]string{"root.pxar:-"}, "cannot come from standard input"},
		{[]string{"a.img:-", "b.blob:-"}, "both read standard input"},
		{[]string{"a.img:/x", "a.img:/y"}, "given twice"},
	} {
		_, err := ParseSpecs(c.args)
		if !errors.Is(err, ErrBadSpec) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseSpecs(%q) = %v, want %q", c.args, err, c.msg)
		}
	}
}
