package storetest

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cairnfs/cairn/store/objstore/memstore"
)

// Requests counts the requests an in-memory bucket serves, by call and
// by what the key is (a chunk's or the store's metadata): what a store's
// operation costs on a real bucket, whose every call is a request (a
// listing's keys excepted: OpListKey is not counted, a listing of 1,000
// keys is one request of S3's).
type Requests struct {
	mu sync.Mutex
	n  map[string]int
}

// CountRequests counts b's requests from now on (it sets b's hook; hook,
// when not nil, runs after the count).
func CountRequests(b *memstore.Bucket, hook memstore.Hook) *Requests {
	r := &Requests{n: map[string]int{}}
	b.SetHook(func(ctx context.Context, c *memstore.Call) error {
		if c.Op != memstore.OpListKey {
			r.mu.Lock()
			r.n[requestClass(c)]++
			r.mu.Unlock()
		}
		if hook != nil {
			return hook(ctx, c)
		}
		return nil
	})
	return r
}

// requestClass is "put chunk", "head meta", ...
func requestClass(c *memstore.Call) string {
	what := "meta"
	if strings.HasPrefix(c.Key, ".chunks/") {
		what = "chunk"
	}
	op := string(c.Op)
	if c.Op == memstore.OpPut && c.Cond.IfAbsent {
		op = "put-if-absent"
	}
	return op + " " + what
}

// Take returns the counts since the last Take and starts again.
func (r *Requests) Take() RequestCounts {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.n
	r.n = map[string]int{}
	return RequestCounts(n)
}

// RequestCounts are requests by class ("put chunk", "head meta", ...).
type RequestCounts map[string]int

// Total is the number of requests, of the classes that have prefix
// ("": all; "put", "head", ...).
func (c RequestCounts) Total(prefix string) int {
	n := 0
	for k, v := range c {
		if strings.HasPrefix(k, prefix) {
			n += v
		}
	}
	return n
}

// Chunk is the requests on chunks' keys.
func (c RequestCounts) Chunk() int {
	n := 0
	for k, v := range c {
		if strings.HasSuffix(k, " chunk") {
			n += v
		}
	}
	return n
}

// PerChunk shows the counts divided by chunks, one class a field.
func (c RequestCounts) PerChunk(chunks int) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(c)) {
		fmt.Fprintf(&sb, "%s %.2f, ", k, float64(c[k])/float64(chunks))
	}
	fmt.Fprintf(&sb, "all %.2f per chunk (%d requests, %d chunks)", float64(c.Total(""))/float64(chunks), c.Total(""), chunks)
	return sb.String()
}
