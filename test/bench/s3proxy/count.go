package main

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
)

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

// writeKinds writes the counts by kind as "KIND COUNT" lines, sorted
// (test/bench/s3-scale.sh reads them).
func writeKinds(w io.Writer, kinds map[string]int) {
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		fmt.Fprintf(w, "%s %d\n", k, kinds[k])
	}
}
