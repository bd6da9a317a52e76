package pxar

import (
	"context"
	"io"
	"testing"
)

// benchList lists the root of a 100k-entry archive once per iteration,
// decoding every entry through the reader next starts.
func benchList(b *testing.B, next func(a *Accessor) func(context.Context) (*Entry, error)) {
	meta, payload := bigDir(b, 100_000)
	a := openArchive(b, meta, payload)
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		step := next(a)
		for {
			_, err := step(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 100_000 {
			b.Fatalf("listed %d entries", n)
		}
	}
}

func BenchmarkReadDirSorted100k(b *testing.B) {
	benchList(b, func(a *Accessor) func(context.Context) (*Entry, error) {
		r, err := a.ReadDirSorted(context.Background(), a.Root())
		if err != nil {
			b.Fatal(err)
		}
		return r.Next
	})
}

func BenchmarkReadDir100k(b *testing.B) {
	benchList(b, func(a *Accessor) func(context.Context) (*Entry, error) {
		r, err := a.ReadDir(a.Root())
		if err != nil {
			b.Fatal(err)
		}
		return r.Next
	})
}

// BenchmarkLookupSmallDirs looks up a path 10 directories deep whose
// directories have 21 entries each: tables that a lookup checks whole.
func BenchmarkLookupSmallDirs(b *testing.B) { benchLookupPath(b, 10, 20) }
