package store

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/chunkcache"
)

// onlyReader hides everything but Read: a stream such as standard input.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// TestAddImageStreamAndBlobData backs up an image from a plain stream
// (size unknown up front, not a multiple of the chunk size) and a blob
// from data, and reads both back; data over the blob limit is refused.
func TestAddImageStreamAndBlobData(t *testing.T) {
	s := testStore(t)
	data := append(randBytes(3*testCS+777, 5), make([]byte, 2*testCS)...)
	b, err := s.StartBackup(context.Background(), Group{Type: "host", ID: "stream"}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddImage(context.Background(), "in.img", onlyReader{bytes.NewReader(data)}, ImageOptions{ChunkSize: testCS}); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBlobData("conf.blob", []byte("memory: 2048\n")); err != nil {
		t.Fatal(err)
	}
	if err := b.AddBlobData("big.blob", make([]byte, MaxBlobData+1)); !errors.Is(err, ErrBlobTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if err := b.AddBlobData("bad.img", nil); !errors.Is(err, ErrBadName) {
		t.Fatalf("blob not named .blob: %v", err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	m, err := s.ReadManifest(b.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadBlob(b.Snapshot(), m, "conf.blob"); err != nil || string(got) != "memory: 2048\n" {
		t.Fatalf("blob: %q %v", got, err)
	}
	x, err := s.OpenSnapshotIndex(b.Snapshot(), m, "in.img.fidx")
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	c, err := NewCache(s, 16*testCS)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got := make([]byte, x.Size())
	if _, err := chunkcache.NewReader(context.Background(), x, c, 1).ReadAt(got, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("image from a stream: %d bytes back, want %d equal ones", len(got), len(data))
	}
}
