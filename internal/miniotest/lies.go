package miniotest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"time"
)

// A Lie answers a request in the server's place (true) or lets the proxy
// forward it (false): an object store, cache or gateway that says what
// is not so. The lies below are those a backup must never turn into a
// false success.
type Lie func(w http.ResponseWriter, r *http.Request) bool

// SetLie makes the proxy tell lie from now on (nil: none).
func (p *Proxy) SetLie(lie Lie) { p.lie.Store(&lie) }

func (p *Proxy) lying(w http.ResponseWriter, r *http.Request) bool {
	l := p.lie.Load()
	return l != nil && *l != nil && (*l)(w, r)
}

// objectKey is the request's key in the bucket (path style: /bucket/key).
func objectKey(r *http.Request) string {
	_, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return key
}

// LieHeadExists answers a HEAD of a key containing part as if the object
// existed (a stale cache): 200, a size, now.
func LieHeadExists(part string) Lie {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodHead || !strings.Contains(objectKey(r), part) {
			return false
		}
		w.Header().Set("Content-Length", "4096")
		w.Header().Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
		w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
		w.WriteHeader(http.StatusOK)
		return true
	}
}

// LiePutNotStored answers a PUT of a key containing part (not a copy) as
// done, reading and dropping its body: 200 with the ETag of nothing.
func LiePutNotStored(part string) Lie {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || r.Header.Get("X-Amz-Copy-Source") != "" || !strings.Contains(objectKey(r), part) {
			return false
		}
		io.Copy(io.Discard, r.Body) //nolint:errcheck // dropped anyway
		sum := md5.Sum(nil)
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.WriteHeader(http.StatusOK)
		return true
	}
}

// LieCopyNotMade answers a copy onto a key containing part (a touch) as
// done without making it: 200 with an old LastModified, as a cache that
// kept the object's would say.
func LieCopyNotMade(part string) Lie {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || r.Header.Get("X-Amz-Copy-Source") == "" || !strings.Contains(objectKey(r), part) {
			return false
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><CopyObjectResult><LastModified>%s</LastModified><ETag>"0123456789abcdef0123456789abcdef"</ETag></CopyObjectResult>`,
			time.Unix(1_600_000_000, 0).UTC().Format("2006-01-02T15:04:05.000Z"))
		return true
	}
}

// LieListOmits answers a listing whose prefix contains part with no
// object (a listing that lags behind the writes).
func LieListOmits(part string) Lie {
	return func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		if r.Method != http.MethodGet || q.Get("list-type") != "2" || !strings.Contains(q.Get("prefix"), part) {
			return false
		}
		bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>%s</Name><Prefix>%s</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated></ListBucketResult>`,
			html.EscapeString(bucket), html.EscapeString(q.Get("prefix")))
		return true
	}
}
