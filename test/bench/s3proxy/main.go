// Command s3proxy is the benchmarks' latency proxy: a reverse proxy on
// loopback that delays every request to an S3 endpoint (as
// internal/miniotest.Proxy does for tests), for test/bench/s3.sh and
// run.sh's object-storage mode (S3=1).
//
//	s3proxy -listen 127.0.0.1:9100 -target http://127.0.0.1:9000 -delay 20ms
//
// It counts what passes through: GET /-/s3proxy-stats (a path no bucket
// can have: bucket names start with a letter or digit) answers with the
// counts since the last ?reset=1 as JSON: requests by method and by
// kind (get, put, head, list, delete-batch, copy, …), bytes sent and
// received, request (body) sizes by power-of-two class, and the most
// requests in flight at once; with ?kinds=1, the counts by kind as
// "KIND COUNT" lines (test/bench/s3-scale.sh).
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// statsPath is where the counts are read (and reset).
const statsPath = "/-/s3proxy-stats"

func main() {
	listen := flag.String("listen", "127.0.0.1:9100", "address to listen on (loopback)")
	target := flag.String("target", "http://127.0.0.1:9000", "the S3 endpoint")
	delay := flag.Duration("delay", 20*time.Millisecond, "added to every request")
	flag.Parse()
	u, err := url.Parse(*target)
	if err != nil {
		log.Fatalf("-target %q: %v", *target, err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 256
	rp.Transport = tr
	st := newStats()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == statsPath && r.URL.Query().Get("kinds") == "1" {
			writeKinds(w, st.snapshot(false).Kinds)
			return
		}
		if r.URL.Path == statsPath {
			w.Header().Set("Content-Type", "application/json")
			if err := json.NewEncoder(w).Encode(st.snapshot(r.URL.Query().Get("reset") == "1")); err != nil {
				log.Printf("stats: %v", err)
			}
			return
		}
		done := st.begin(r)
		defer done()
		t := time.NewTimer(*delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		cw := &countingWriter{ResponseWriter: w}
		rp.ServeHTTP(cw, r)
		st.sent(cw.n)
	})
	log.Fatal(http.ListenAndServe(*listen, h))
}
