package format

import (
	"bytes"
	"errors"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/block"
)

// memTape is one tape file in memory; blocks from leomAt on report LEOM.
type memTape struct {
	buf    bytes.Buffer
	blocks int
	leomAt int // 0: never
}

func (m *memTape) WriteBlock(b []byte) (bool, error) {
	if len(b) != block.Size {
		return false, errors.New("bad block size")
	}
	m.buf.Write(b)
	m.blocks++
	return m.leomAt > 0 && m.blocks >= m.leomAt, nil
}

func (m *memTape) WriteFilemark() error { return nil }

func newTape(leomAt int) (*memTape, *block.Writer) {
	m := &memTape{leomAt: leomAt}
	return m, block.NewWriter(m)
}

func (m *memTape) reader(t *testing.T) *block.Reader {
	t.Helper()
	r, err := block.NewReader(block.StreamSource(bytes.NewReader(m.buf.Bytes())), "mem")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
