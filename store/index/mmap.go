package index

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// ErrFault is returned when a mapped index file could not be read:
// it shrank or its disk failed while mapped (cairn never changes an
// index once written; another program or a damaged disk might).
var ErrFault = errors.New("index file changed or failed while mapped")

// indexMap is a read-only mapping of an index file whose reads survive
// the file shrinking under it: every read of the mapping runs with
// debug.SetPanicOnFault, and a fault (SIGBUS) is kept as the index's
// error instead of killing the process. A mapping keeps the mount's
// reads as fast as they were (no copy of large indexes on the heap for
// each open, no system call per chunk) and its pages shared.
type indexMap struct {
	path  string
	data  []byte
	fault atomic.Pointer[error]
}

// mapIndex maps a whole index file read-only after checking its size
// against the header's minimum and its magic.
func mapIndex(path string, magic [8]byte) (*indexMap, error) {
	f, fi, err := fsutil.OpenRegular(path)
	switch {
	case errors.Is(err, fsutil.ErrNotRegular):
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	case err != nil:
		return nil, fmt.Errorf("open index: %w", err)
	}
	defer f.Close()
	if fi.Size() < indexHeaderSize {
		return nil, fmt.Errorf("%s: %w: %d bytes, shorter than the %d-byte header", path, ErrFormat, fi.Size(), indexHeaderSize)
	}
	if fi.Size() > MaxFileSize {
		return nil, fmt.Errorf("%s: %w: %d bytes, more than an index may have", path, ErrFormat, fi.Size())
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	m := &indexMap{path: path, data: data}
	var got [8]byte
	if m.read(got[:], 0); m.err() != nil {
		m.close()
		return nil, m.err()
	}
	if got != magic {
		m.close()
		return nil, fmt.Errorf("%s: %w: wrong magic %v", path, ErrFormat, got)
	}
	return m, nil
}

// MaxFileSize bounds an index file's size: 1<<34 bytes list 4 Pi of
// 4 MiB chunks (fixed) or 1.6 Pi of them (dynamic).
const MaxFileSize = 1 << 34

// read copies len(dst) bytes of the mapping at off into dst. A fault
// leaves dst as it was and is recorded (see err).
func (m *indexMap) read(dst []byte, off int) {
	defer m.recover(debug.SetPanicOnFault(true))
	copy(dst, m.data[off:off+len(dst)])
}

// run calls fn, which reads the mapping, with faults turned into the
// index's error, and returns fn's error or that fault.
func (m *indexMap) run(fn func() error) (err error) {
	defer func() {
		if err == nil {
			err = m.err()
		}
	}()
	defer m.recover(debug.SetPanicOnFault(true))
	return fn()
}

// recover, deferred with the previous SetPanicOnFault setting by a
// function that reads the mapping, records a memory fault as the
// index's error; other panics go on.
func (m *indexMap) recover(old bool) {
	p := recover()
	debug.SetPanicOnFault(old)
	if p == nil {
		return
	}
	if re, ok := p.(runtime.Error); ok {
		if _, fault := re.(interface{ Addr() uintptr }); fault {
			err := fmt.Errorf("%s: %w: %v", m.path, ErrFault, re)
			m.fault.CompareAndSwap(nil, &err)
			return
		}
	}
	panic(p)
}

// err is the first fault met reading the mapping, or nil.
func (m *indexMap) err() error {
	if e := m.fault.Load(); e != nil {
		return *e
	}
	return nil
}

// sum hashes the mapping from off to its end; a fault leaves a zero sum
// and the index's error set.
func (m *indexMap) sum(off int) (s [32]byte) {
	defer m.recover(debug.SetPanicOnFault(true))
	return sha256.Sum256(m.data[off:])
}

func (m *indexMap) close() error {
	if m == nil || m.data == nil {
		return nil
	}
	err := unix.Munmap(m.data)
	m.data = nil
	return err
}
