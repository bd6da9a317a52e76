package s3store

import (
	"errors"
	"strings"
	"testing"
)

// Every class of key that is not a snapshot file of the layout is
// refused, with an error naming the key; the others are read back.
func TestParseSnapshotKey(t *testing.T) {
	const tm = "2025-03-01T00:00:00Z"
	good := map[string]string{
		"vm/100/" + tm + "/index.json.blob":                         "vm/100/" + tm,
		"ct/a.b-c_d/" + tm + "/root.pxar.didx":                      "ct/a.b-c_d/" + tm,
		"ns/a/ns/b/host/h/" + tm + "/.protected":                    "ns/a/ns/b/host/h/" + tm,
		"host/h/" + tm + "/client.log.blob":                         "host/h/" + tm,
		"ns/1/ns/2/ns/3/ns/4/ns/5/ns/6/ns/7/vm/1/" + tm + "/x.blob": "ns/1/ns/2/ns/3/ns/4/ns/5/ns/6/ns/7/vm/1/" + tm,
	}
	for key, want := range good {
		snap, _, err := parseSnapshotKey(key)
		if err != nil || snap.String() != want {
			t.Errorf("%s: %v %v, want %s", key, snap, err, want)
		}
	}
	bad := []string{
		"vm/1/" + tm + "/../../../../etc/passwd", // dot-dot
		"vm/1/../" + tm + "/x.blob",
		"ns/../vm/1/" + tm + "/x.blob",
		"/vm/1/" + tm + "/x.blob",          // absolute
		"vm//1/" + tm + "/x.blob",          // empty component
		"vm/1/" + tm + "/",                 // a directory marker
		"vm/1/" + tm + "/a/b",              // too deep
		"vm/1/" + tm,                       // too shallow
		"vm/1/" + tm + "/.hidden",          // hidden name
		"vm/1/" + tm + "/.index.json.lck",  // a local lock's name
		"vm/1/" + tm + "/x\x00y",           // NUL
		"vm/1/" + tm + "/x y.blob",         // odd name
		"vm/1/" + tm + "/x.blob\\..\\esc",  // odd name
		"vm/1/" + tm + "/disk.img",         // not an index or blob
		"vm/1/2025-03-01/x.blob",           // not a time
		"vm/1/2025-02-30T00:00:00Z/x.blob", // no such day
		"xx/1/" + tm + "/x.blob",           // no such type
		"vm/-1/" + tm + "/x.blob",          // bad id
		"vm/.x/" + tm + "/x.blob",
		"ns/a/" + tm + "/x.blob",
		strings.Repeat("ns/a/", 8) + "vm/1/" + tm + "/x.blob", // namespaces too deep
		strings.Repeat("ns/a/", 200) + "vm/1/" + tm + "/x.blob",
		"ns/a/vm/1/" + tm + "/x.blob/y",
	}
	for _, key := range bad {
		_, _, err := parseSnapshotKey(key)
		var ke *KeyError
		if !errors.As(err, &ke) || ke.Key != key || !strings.Contains(err.Error(), "refused") {
			t.Errorf("%q: %v, want a *KeyError naming it", key, err)
		}
	}
}
