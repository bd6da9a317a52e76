package tape

import (
	"encoding/binary"
	"slices"
	"testing"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
)

func TestDigestScanner(t *testing.T) {
	var ds []chunk.Digest
	for i := range 5 {
		ds = append(ds, chunk.Sum([]byte{byte(i)}))
	}
	fidx := make([]byte, indexHeaderSize)
	copy(fidx, index.MagicFixed[:])
	didx := make([]byte, indexHeaderSize)
	copy(didx, index.MagicDynamic[:])
	for i, d := range ds {
		fidx = append(fidx, d[:]...)
		didx = binary.LittleEndian.AppendUint64(didx, uint64(i+1)*4096)
		didx = append(didx, d[:]...)
	}
	for _, tc := range []struct {
		name string
		data []byte
		ok   bool
	}{
		{"a.img.fidx", fidx, true},
		{"root.mpxar.didx", didx, true},
		{"cut.fidx", fidx[:len(fidx)-3], false},
		{"header.didx", didx[:100], false},
		{"magic.fidx", didx, false},
	} {
		for _, step := range []int{1, 7, 4096, 1 << 20} {
			var got []chunk.Digest
			s := newDigestScanner(tc.name, func(d chunk.Digest) { got = append(got, d) })
			var err error
			for b := tc.data; len(b) > 0 && err == nil; {
				n := min(step, len(b))
				_, err = s.Write(b[:n])
				b = b[n:]
			}
			if err == nil {
				err = s.Close()
			}
			if (err == nil) != tc.ok {
				t.Fatalf("%s step %d: %v", tc.name, step, err)
			}
			if tc.ok && !slices.Equal(got, ds) {
				t.Fatalf("%s step %d: %d digests", tc.name, step, len(got))
			}
		}
	}
	if newDigestScanner("x.blob", nil) != nil {
		t.Fatal("scanner for a blob")
	}
}
