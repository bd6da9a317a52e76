package main

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// statsPath is where the proxy answers with its request counts instead
// of passing the request on: one "KIND COUNT" line per kind, sorted.
const statsPath = "/.s3proxy/requests"

// counts are the requests passed on, by kind.
type counts struct {
	mu sync.Mutex
	n  map[string]int64
}

// kind names what an S3 request does.
func kind(r *http.Request) string {
	q := r.URL.Query()
	key := strings.Count(strings.Trim(r.URL.Path, "/"), "/") > 0 // path style: /bucket/key
	switch {
	case r.Method == http.MethodPost && q.Has("delete"):
		return "delete-batch"
	case r.Method == http.MethodGet && !key && (q.Has("list-type") || q.Has("prefix")):
		return "list"
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		return "copy"
	case key:
		return strings.ToLower(r.Method)
	}
	return strings.ToLower(r.Method) + "-bucket"
}

func (c *counts) add(r *http.Request) {
	k := kind(r)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int64{}
	}
	c.n[k]++
}

// ServeHTTP writes the counts.
func (c *counts) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	keys := make([]string, 0, len(c.n))
	for k := range c.n {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "%s %d\n", k, c.n[k])
	}
}
