package pxar

import (
	"errors"
	"testing"
)

// FuzzAccessor decodes arbitrary metadata and payload streams: it must
// never panic or read outside them, and every failure must be a
// corruption error (or a missing payload stream).
func FuzzAccessor(f *testing.F) {
	for _, split := range []bool{true, false} {
		t := &testing.T{}
		meta, payload := smallArchive(t, split)
		f.Add(meta, payload)
		small := dirNode("",
			fileNode("a", []byte("x")),
			&node{name: "l", kind: KindSymlink, target: "a", meta: Metadata{Stat: Stat{Mode: ModeIFLNK | 0o777}}},
			&node{name: "p", kind: KindFIFO, meta: Metadata{Stat: Stat{Mode: ModeIFIFO | 0o600}}},
		)
		g, q := uint64(4), uint64(9)
		small.children[0].meta = Metadata{
			Stat:   small.children[0].meta.Stat,
			Xattrs: []Xattr{{Name: []byte("user.x"), Value: []byte("y")}},
			ACL: ACL{Users: []ACLEntry{{ID: 1, Perm: 7}}, Groups: []ACLEntry{{ID: 2, Perm: 5}}, GroupObj: &g,
				Default: &ACLDefault{7, 5, 0, ACLNoMask}, DefaultUsers: []ACLEntry{{ID: 3, Perm: 1}}},
			FCaps:          []byte{1, 2},
			QuotaProjectID: &q,
		}
		small.children = append(small.children, &node{name: "z", kind: KindDevice, dev: Device{Major: 8, Minor: 1},
			meta: Metadata{Stat: Stat{Mode: ModeIFBLK | 0o600}}})
		meta, payload = encodeTree(t, small, split)
		f.Add(meta, payload)
	}
	f.Fuzz(func(t *testing.T, meta, payload []byte) {
		if len(payload) == 0 {
			payload = nil
		}
		err := walkAll(meta, payload, 2000)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNoPayload) {
			t.Fatalf("unexpected error kind: %v", err)
		}
	})
}
