package media

import (
	"errors"
	"testing"

	"github.com/cairnfs/cairn/jobs/tape/block"
)

// Archives whose last block reaches the early-warning zone end the tape:
// the next file goes to a new tape instead of running out of space.
// Tapes too small for the set's catalogs fail with ErrTooLarge, never
// with the drive's end of media.
func TestLEOMOnLastBlock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int64
		wantErr error
	}{
		{"2M tapes", 2 << 20, nil},
		{"1M tapes", 1 << 20, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, p := openPool(t, t.TempDir(), PoolOptions{TapeSize: tc.size, AutoCreate: true})
			w, err := p.NewWriter(WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close(ctx)
			for i := range 6 {
				err = w.WriteChunks(ctx, "st", feed(makeChunks(t, uint64(i), 2, 100<<10)))
				if err == nil {
					err = w.WriteSnapshot(ctx, "st", "vm/1/snap"+string(rune('a'+i)), snapFS, snapFiles)
				}
				if err != nil {
					break
				}
			}
			if errors.Is(err, block.ErrEndOfMedia) || !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && len(w.Stats().Tapes) < 3 {
				t.Fatalf("tapes %v", w.Stats().Tapes)
			}
		})
	}
}
