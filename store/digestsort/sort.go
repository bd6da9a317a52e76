package digestsort

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/cairnfs/cairn/chunk"
)

const (
	// sortRunDigests is the size of the in-memory run (8 MiB).
	sortRunDigests = 1 << 18
	// sortFanIn is how many run files are merged at once.
	sortFanIn = 64
	// sortReadBuf is each merged run's read buffer.
	sortReadBuf = 32 << 10
)

// Sorter collects digests from many goroutines into a set on the local
// disk.
type Sorter struct {
	dir   string // where run files go (made by the caller, removed by it)
	runN  int    // digests per in-memory run
	fanIn int

	mu   sync.Mutex
	run  []chunk.Digest
	runs []string
	seq  int
	err  error // the first spill error: the set is incomplete
}

// New returns an empty set whose run files go in dir, which the caller
// makes and removes.
func New(dir string) *Sorter {
	return &Sorter{dir: dir, runN: sortRunDigests, fanIn: sortFanIn}
}

// Add puts d in the set.
func (s *Sorter) Add(d chunk.Digest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if s.run == nil {
		s.run = make([]chunk.Digest, 0, s.runN)
	}
	s.run = append(s.run, d)
	if len(s.run) >= s.runN {
		s.err = s.spill()
	}
	return s.err
}

// Compare orders digests bytewise, as their chunk keys sort; the first
// eight bytes, compared as one number, almost always decide.
func Compare(a, b chunk.Digest) int {
	if x, y := binary.BigEndian.Uint64(a[:8]), binary.BigEndian.Uint64(b[:8]); x != y {
		if x < y {
			return -1
		}
		return 1
	}
	return bytes.Compare(a[8:], b[8:])
}

// spill sorts the in-memory run into a run file.
func (s *Sorter) spill() error {
	slices.SortFunc(s.run, Compare)
	run := slices.Compact(s.run)
	name, err := s.writeRun(func(w *bufio.Writer) error {
		for i := range run {
			if _, err := w.Write(run[i][:]); err != nil {
				return err
			}
		}
		return nil
	})
	s.run = s.run[:0]
	if err != nil {
		return err
	}
	s.runs = append(s.runs, name)
	if len(s.runs) < s.fanIn {
		return nil
	}
	// merge the runs into one, so that no more than fanIn are ever open
	m, err := openMerge(s.runs)
	if err != nil {
		return err
	}
	name, err = s.writeRun(func(w *bufio.Writer) error {
		for {
			d, ok, err := m.Next()
			if err != nil || !ok {
				return err
			}
			if _, err := w.Write(d[:]); err != nil {
				return err
			}
		}
	})
	m.Close()
	if err != nil {
		return err
	}
	for _, r := range s.runs {
		os.Remove(r)
	}
	s.runs = append(s.runs[:0], name)
	return nil
}

// writeRun writes a new run file with fill.
func (s *Sorter) writeRun(fill func(*bufio.Writer) error) (string, error) {
	s.seq++
	name := filepath.Join(s.dir, fmt.Sprintf("run-%06d", s.seq))
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("marked set: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("marked set: write %s: %w", name, err)
	}
	return name, nil
}

// Finish ends the set and returns its digests in ascending order, each
// once. The sorter is not used afterwards.
func (s *Sorter) Finish() (*Merge, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	if len(s.run) > 0 || len(s.runs) == 0 {
		if err := s.spill(); err != nil {
			return nil, err
		}
	}
	s.run = nil
	return openMerge(s.runs)
}

// Merge is a k-way merge of sorted run files.
type Merge struct {
	h       runHeap
	files   []*os.File
	last    chunk.Digest
	started bool
}

type runReader struct {
	r    *bufio.Reader
	name string
	cur  chunk.Digest
}

type runHeap []*runReader

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return Compare(h[i].cur, h[j].cur) < 0 }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*runReader)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// next reads the run's next digest; ok is false at its end.
func (r *runReader) next() (ok bool, err error) {
	_, err = io.ReadFull(r.r, r.cur[:])
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, io.EOF):
		return false, nil
	}
	return false, fmt.Errorf("marked set: read %s: %w", r.name, err)
}

func openMerge(names []string) (*Merge, error) {
	m := &Merge{}
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("marked set: %w", err)
		}
		m.files = append(m.files, f)
		r := &runReader{r: bufio.NewReaderSize(f, sortReadBuf), name: name}
		ok, err := r.next()
		if err != nil {
			m.Close()
			return nil, err
		}
		if ok {
			m.h = append(m.h, r)
		}
	}
	heap.Init(&m.h)
	return m, nil
}

// Next returns the next digest; ok is false at the end.
func (m *Merge) Next() (d chunk.Digest, ok bool, err error) {
	for len(m.h) > 0 {
		top := m.h[0]
		d = top.cur
		more, err := top.next()
		if err != nil {
			return d, false, err
		}
		if more {
			heap.Fix(&m.h, 0)
		} else {
			heap.Pop(&m.h)
		}
		if m.started && d == m.last {
			continue
		}
		m.started, m.last = true, d
		return d, true, nil
	}
	return d, false, nil
}

// Close closes the run files.
func (m *Merge) Close() {
	for _, f := range m.files {
		f.Close()
	}
	m.files, m.h = nil, nil
}
