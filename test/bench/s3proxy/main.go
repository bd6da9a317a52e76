// Command s3proxy is the benchmarks' latency proxy: a reverse proxy on
// loopback that delays every request to an S3 endpoint (as
// internal/miniotest.Proxy does for tests), for test/bench/s3.sh. It
// counts the requests it passes on by kind (get, put, head, list,
// delete-batch, ...): GET /.s3proxy/requests answers with the counts
// (test/bench/s3-scale.sh).
//
//	s3proxy -listen 127.0.0.1:9100 -target http://127.0.0.1:9000 -delay 20ms
package main

import (
	"flag"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

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
	var n counts
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == statsPath {
			n.ServeHTTP(w, r)
			return
		}
		n.add(r)
		t := time.NewTimer(*delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return
		case <-t.C:
		}
		rp.ServeHTTP(w, r)
	})
	log.Fatal(http.ListenAndServe(*listen, h))
}
