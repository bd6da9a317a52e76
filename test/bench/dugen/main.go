// Command dugen fills a store with many small snapshots for `cairn du`'s
// scale measurement (test/bench/scale-du.sh): G groups of N snapshots,
// each a real image backup written through the store's backup code
// (StartBackup, AddImage, Finish) of K 64 KiB chunks: K-1 taken from its
// group's pool of P chunks (so the snapshots of a group share most of
// their data) and one of its own (its unique bytes).
//
//	dugen -store DIR -groups 100 -per 100 -chunks 8 -pool 32
package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/cairnfs/cairn/store"
)

const chunkSize = 64 << 10

func main() {
	dir := flag.String("store", "", "store directory (made with cairn init)")
	groups := flag.Int("groups", 100, "groups")
	per := flag.Int("per", 100, "snapshots per group")
	chunks := flag.Int("chunks", 8, "chunks per snapshot")
	pool := flag.Int("pool", 32, "shared chunks per group")
	flag.Parse()
	if err := run(*dir, *groups, *per, *chunks, *pool); err != nil {
		fmt.Fprintln(os.Stderr, "dugen:", err)
		os.Exit(1)
	}
}

// block is chunk seed's data: random, the same for the same seed.
func block(seed uint64) []byte {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	b := make([]byte, chunkSize)
	rand.NewChaCha8(s).Read(b)
	return b
}

func run(dir string, groups, per, chunks, pool int) error {
	s, err := store.Open(dir)
	if err != nil {
		return err
	}
	defer s.Close()
	ctx := context.Background()
	t0 := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for g := range groups {
		grp := store.Group{Type: "host", ID: fmt.Sprintf("g%04d", g)}
		shared := make([][]byte, pool)
		for i := range shared {
			shared[i] = block(uint64(g)<<32 | uint64(i))
		}
		for n := range per {
			var img []byte
			for k := range chunks - 1 {
				img = append(img, shared[(n+k)%pool]...)
			}
			img = append(img, block(1<<63|uint64(g)<<32|uint64(n))...)
			if err := backup(ctx, s, grp, t0.Add(time.Duration(n)*time.Minute), img); err != nil {
				return err
			}
		}
	}
	return nil
}

func backup(ctx context.Context, s *store.Store, g store.Group, t time.Time, img []byte) error {
	b, err := s.StartBackup(ctx, g, t)
	if err != nil {
		return err
	}
	b.Sync = store.SyncNone
	if err := b.AddImage(ctx, "disk.img", bytes.NewReader(img), store.ImageOptions{ChunkSize: chunkSize, Workers: 1}); err != nil {
		b.Abort()
		return err
	}
	if err := b.Finish(); err != nil {
		return fmt.Errorf("%s at %s: %w", g, t, err)
	}
	return nil
}
