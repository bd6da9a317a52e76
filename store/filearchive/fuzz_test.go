package filearchive

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzStatTable reads arbitrary stat tables: never a panic, every
// failure an ErrBadStatTable, IDs found in increasing order.
func FuzzStatTable(f *testing.F) {
	var b bytes.Buffer
	w, _ := newStatWriter(&b)
	w.add(&statRecord{ID: 10, Ino: 3, Trusted: true})
	w.add(&statRecord{ID: 300, Ino: 1 << 40})
	w.flush()
	f.Add(b.Bytes(), uint64(10))
	f.Add(b.Bytes()[:12], uint64(300))
	f.Fuzz(func(t *testing.T, data []byte, id uint64) {
		r, err := newStatReader("t", bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrBadStatTable) {
				t.Fatalf("error %v", err)
			}
			return
		}
		last := uint64(0)
		for _, want := range []uint64{id / 2, id, id + 1} {
			rec, ok, err := r.find(want)
			if err != nil {
				if !errors.Is(err, ErrBadStatTable) {
					t.Fatalf("error %v", err)
				}
				return
			}
			if ok && (rec.ID != want || rec.ID < last || rec.Ctime.Nanos >= 1e9) {
				t.Fatalf("find(%d) = %+v", want, rec)
			}
			last = want
		}
	})
}
