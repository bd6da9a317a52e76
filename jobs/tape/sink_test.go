package tape

import (
	"os"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
)

// The store sink touches a chunk it finds present: the snapshot a tape
// restore writes references it, and a GC running meanwhile must keep it.
// A chunk that is gone is reported missing, to be read from tape.
func TestStoreSinkTouchesPresentChunks(t *testing.T) {
	s := newStore(t)
	data := randBytes("sink", 3000)
	d := chunk.Sum(data)
	blob, _ := chunk.EncodeBlob(nil, data, true)
	if _, err := s.InsertChunk(d, blob); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
	if err := os.Chtimes(s.ChunkPath(d), old, old); err != nil {
		t.Fatal(err)
	}
	sink, err := NewStoreSink(bg, s)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	if !sink.HasChunk(d) {
		t.Fatal("present chunk reported missing")
	}
	if info, err := s.StatChunk(d); err != nil || !info.Atime.After(old.Add(time.Hour)) {
		t.Fatalf("present chunk not touched: atime %v (%v)", info.Atime, err)
	}
	if sink.HasChunk(chunk.Sum([]byte("absent"))) {
		t.Fatal("absent chunk reported present")
	}
}

// A tape restore into the store is a running writer until the sink
// closes: GC's cutoff stays before its start.
func TestStoreSinkRegistersWriter(t *testing.T) {
	s := newStore(t)
	before := time.Now()
	sink, err := NewStoreSink(bg, s)
	if err != nil {
		t.Fatal(err)
	}
	oldest, ok, err := s.OldestWriter()
	if err != nil || !ok || oldest.Before(before) || oldest.After(time.Now()) {
		t.Fatalf("while the sink is open: oldest writer %v %v %v (opened at %v)", oldest, ok, err, before)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.OldestWriter(); ok || err != nil {
		t.Fatalf("after Close: a writer is still registered (%v)", err)
	}
}
