package s3store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/objstore/memstore"
	"golang.org/x/sync/errgroup"
)

// chunkKeysBucket is an in-memory bucket holding n chunk keys (and
// their .bad copies for every 97th) and keys under .chunks/ that are no
// chunk's, before, between and after the hex prefixes.
func chunkKeysBucket(n int) (*memstore.Bucket, []string) {
	b := memstore.New(objstore.Config{})
	return b, putChunkKeys(b, n)
}

func putChunkKeys(b objstore.Objects, n int) []string {
	var keys []string
	for i := range n {
		sum := sha256.Sum256(fmt.Appendf(nil, "chunk %d", i))
		name := hex.EncodeToString(sum[:])
		keys = append(keys, chunkDir+"/"+name[:4]+"/"+name)
		if i%97 == 0 {
			keys = append(keys, chunkDir+"/"+name[:4]+"/"+name+".0.bad")
		}
	}
	for _, k := range []string{"+junk", "0", "0abc", "7/x", "ABCD/" + strings.Repeat("A", 64), "g", "zzz/x", "~"} {
		keys = append(keys, chunkDir+"/"+k)
	}
	keys = append(keys, ".chunksx", "ns/x")
	var g errgroup.Group
	g.SetLimit(16)
	for _, k := range keys {
		g.Go(func() error {
			_, err := b.Put(context.Background(), k, objstore.Cond{}, []byte{1})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		panic(err)
	}
	slices.Sort(keys)
	return keys
}

// isChunkListed: a key the parallel listing must yield (under a hex
// prefix; the others are no chunk's).
func isChunkListed(k string) bool {
	rest, ok := strings.CutPrefix(k, chunkDir+"/")
	if !ok || rest == "" {
		return false
	}
	c := rest[0]
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f'
}

func collect(t *testing.T, ctx context.Context, b objstore.Objects) ([]string, error) {
	t.Helper()
	var got []string
	for info, err := range listChunkObjects(ctx, b) {
		if err != nil {
			return got, err
		}
		got = append(got, info.Key)
	}
	return got, nil
}

// The parallel listing yields what one listing of .chunks/ yields, in
// order, for buckets of every size around the probe's page (one
// request for one page, ranges beyond it), and a chunk key is never
// left out; at most listWorkers ranges are ahead of the consumer.
func TestListChunkObjects(t *testing.T) {
	defer func(w int) { listWorkers = w }(listWorkers)
	listWorkers = 3
	for _, n := range []int{0, 1, 990, 1000, 1200, 3000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			b, keys := chunkKeysBucket(n)
			var mu sync.Mutex
			var lists []string
			b.SetHook(func(_ context.Context, c *memstore.Call) error {
				if c.Op == memstore.OpList {
					mu.Lock()
					lists = append(lists, c.Key)
					mu.Unlock()
				}
				return nil
			})
			want := checkListing(t, b, keys)
			if len(want) <= listProbeKeys && len(lists) != 1 {
				t.Errorf("%d keys listed with %d listings, want 1", len(want), len(lists))
			}
			if len(want) > 2*listProbeKeys && len(lists) < 10 {
				t.Errorf("%d keys listed with %d listings: not split", len(want), len(lists))
			}
		})
	}
}

// checkListing checks that the parallel listing of b yields the chunk
// keys of keys, in order, and returns them.
func checkListing(t *testing.T, b objstore.Objects, keys []string) []string {
	t.Helper()
	got, err := collect(t, context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, k := range keys {
		if isChunkListed(k) {
			want = append(want, k)
		}
	}
	// the probe yields what it lists, no-chunk keys included
	got = slices.DeleteFunc(got, func(k string) bool { return !isChunkListed(k) })
	if !slices.Equal(got, want) {
		t.Fatalf("listed %d keys, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
	return want
}

// On MinIO too (real pages of 1000 keys, real prefix listings).
func TestListChunkObjectsMinIO(t *testing.T) {
	srv := miniotest.Start(t)
	b, _ := srv.OpenBucket(t, objstore.Options{})
	checkListing(t, b, putChunkKeys(b, 2500))
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// At most listWorkers ranges are listed ahead of the one the consumer
// takes (memory bounded), checked as each range's listing starts.
func TestListChunkObjectsWindow(t *testing.T) {
	defer func(w int) { listWorkers = w }(listWorkers)
	listWorkers = 2
	b, _ := chunkKeysBucket(3000)
	var mu sync.Mutex
	current := -1 // the range of the last key consumed
	var bad error
	b.SetHook(func(_ context.Context, c *memstore.Call) error {
		if c.Op != memstore.OpList || c.Key == chunkDir+"/" {
			return nil
		}
		r, _ := hexDigitOf(c.Key[len(chunkDir)+1])
		mu.Lock()
		defer mu.Unlock()
		if r > current+listWorkers && bad == nil {
			bad = fmt.Errorf("range %d started while the consumer is in range %d", r, current)
		}
		return nil
	})
	for info, err := range listChunkObjects(context.Background(), b) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := hexDigitOf(info.Key[len(chunkDir)+1]); ok {
			mu.Lock()
			current = max(current, r)
			mu.Unlock()
		}
	}
	if bad != nil {
		t.Fatal(bad)
	}
}

func hexDigitOf(c byte) (int, bool) {
	i := strings.IndexByte("0123456789abcdef", c)
	return i, i >= 0
}

// A range's listing that fails fails the whole listing (whichever range
// it is, and whatever the others do), and a consumer that stops early
// or a cancelled context ends it: every goroutine returns (-race and
// the test's end would show one left).
func TestListChunkObjectsFails(t *testing.T) {
	b, _ := chunkKeysBucket(3000)
	boom := errors.New("boom")
	for _, failing := range []string{chunkDir + "/", chunkDir + "/7", chunkDir + "/b", chunkDir + "/f"} {
		b.SetHook(func(_ context.Context, c *memstore.Call) error {
			if c.Op == memstore.OpList && c.Key == failing {
				return boom
			}
			return nil
		})
		if _, err := collect(t, context.Background(), b); !errors.Is(err, boom) {
			t.Errorf("listing %s failed: the listing ended with %v", failing, err)
		}
	}
	b.SetHook(nil)
	n := 0
	for _, err := range listChunkObjects(context.Background(), b) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 1500 {
			break
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n = 0
	var err error
	for _, err = range listChunkObjects(ctx, b) {
		if err != nil {
			break
		}
		if n++; n == 1500 {
			cancel()
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled listing ended with %v", err)
	}
}

// The ranges follow the probe's last key and its reach: 16, 256 or 4096
// prefixes, the one holding the key listed after it, those before it
// left out; a key after every hex prefix leaves no range.
func TestChunkRanges(t *testing.T) {
	d := strings.Repeat("0", 60)
	for _, c := range []struct {
		last       string
		n          int
		first      keyRange
		firstWhole string
	}{
		{chunkDir + "/8000/8000" + d, 8, keyRange{prefix: chunkDir + "/8", startAfter: chunkDir + "/8000/8000" + d}, chunkDir + "/9"},
		{chunkDir + "/0100/0100" + d, 255, keyRange{prefix: chunkDir + "/01", startAfter: chunkDir + "/0100/0100" + d}, chunkDir + "/02"},
		{chunkDir + "/0000/0000" + d, 4096, keyRange{prefix: chunkDir + "/000", startAfter: chunkDir + "/0000/0000" + d}, chunkDir + "/001"},
		{chunkDir + "/+junk", 4096, keyRange{prefix: chunkDir + "/000", startAfter: ""}, chunkDir + "/001"},
		{chunkDir + "/ffff/ffff" + d, 1, keyRange{prefix: chunkDir + "/f", startAfter: chunkDir + "/ffff/ffff" + d}, ""},
		{chunkDir + "/zzz", 0, keyRange{}, ""},
	} {
		rs := chunkRanges(c.last)
		if len(rs) != c.n {
			t.Errorf("after %q: %d ranges, want %d", c.last, len(rs), c.n)
			continue
		}
		if c.n == 0 {
			continue
		}
		if rs[0] != c.first {
			t.Errorf("after %q: first range %+v, want %+v", c.last, rs[0], c.first)
		}
		if c.n > 1 && (rs[1] != keyRange{prefix: c.firstWhole}) {
			t.Errorf("after %q: second range %+v, want %s whole", c.last, rs[1], c.firstWhole)
		}
	}
}
