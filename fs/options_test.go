package fs

import (
	"errors"
	"testing"

	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/chunkcache"
)

// TestOptionsBounds: read-ahead must fit in half of the cache (the
// default shrinks to fit), and images and blobs take read bits only.
func TestOptionsBounds(t *testing.T) {
	s, err := store.CreateWith(t.TempDir(), store.CreateOptions{LazyPrefixDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		cache     int64
		readahead int
		mode      uint32
		want      int // read-ahead after defaults; -1: refused
	}{
		{0, 0, 0, chunkcache.DefaultReadahead},
		{0, 32, 0, 32},
		{0, 33, 0, -1},
		{0, 1 << 30, 0, -1},
		{12 << 20, 0, 0, 1},
		{4 << 20, 0, 0, 0},
		{12 << 20, 2, 0, -1},
		{0, -1, 0, 0},
		{0, 0, 0o444, chunkcache.DefaultReadahead},
		{0, 0, 0o644, -1},
		{0, 0, 0o4400, -1},
		{0, 0, 0o111, -1},
	} {
		o := Options{Store: s, CacheSize: tt.cache, Readahead: tt.readahead, ImageMode: tt.mode}
		err := o.setDefaults()
		switch {
		case tt.want < 0 && !errors.Is(err, errBadOptions):
			t.Errorf("cache %d readahead %d mode %o: %v, want refused", tt.cache, tt.readahead, tt.mode, err)
		case tt.want >= 0 && (err != nil || o.Readahead != tt.want):
			t.Errorf("cache %d readahead %d mode %o: %v, readahead %d, want %d", tt.cache, tt.readahead, tt.mode, err, o.Readahead, tt.want)
		case tt.want >= 0 && tt.mode == 0 && o.ImageMode != DefaultImageMode:
			t.Errorf("default image mode %o", o.ImageMode)
		}
	}
}
