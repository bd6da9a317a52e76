package miniotest

import (
	"crypto/md5"
	"encoding/base64"
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

// RefuseIfNoneMatch answers a PUT (not a copy) of a key containing part
// made with If-None-Match with 501 NotImplemented, as servers without
// conditional writes do.
func RefuseIfNoneMatch(part string) Lie {
	return func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || r.Header.Get("X-Amz-Copy-Source") != "" ||
			r.Header.Get("If-None-Match") == "" || !strings.Contains(objectKey(r), part) {
			return false
		}
		io.Copy(io.Discard, r.Body) //nolint:errcheck // refused anyway
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusNotImplemented)
		fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message><Header>If-None-Match</Header></Error>`)
		return true
	}
}

// An AnswerLie rewrites the server's answer to a request the proxy
// forwarded (nil: the answer as it is).
type AnswerLie func(resp *http.Response) error

// SetAnswerLie makes the proxy rewrite answers with lie from now on (nil:
// none).
func (p *Proxy) SetAnswerLie(lie AnswerLie) { p.answerLie.Store(&lie) }

func (p *Proxy) modifyResponse(resp *http.Response) error {
	p.watches.see(resp.Request, resp.StatusCode)
	l := p.answerLie.Load()
	if l == nil || *l == nil {
		return nil
	}
	return (*l)(resp)
}

// IgnoreIfNoneMatch answers a PUT (not a copy) of a key containing part
// that If-None-Match refused (412: the object exists) as done, with the
// ETag of the body sent (its Content-MD5): a server that ignores the
// condition, as far as a client can tell (the object is the old one,
// with its old time).
func IgnoreIfNoneMatch(part string) AnswerLie {
	return func(resp *http.Response) error {
		r := resp.Request
		if resp.StatusCode != http.StatusPreconditionFailed || r.Method != http.MethodPut ||
			r.Header.Get("X-Amz-Copy-Source") != "" || r.Header.Get("If-None-Match") == "" || !strings.Contains(objectKey(r), part) {
			return nil
		}
		sum, err := base64.StdEncoding.DecodeString(r.Header.Get("Content-MD5"))
		if err != nil {
			return nil // no MD5 to answer with: the refusal stands
		}
		resp.Body.Close()
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
		resp.Header.Set("ETag", `"`+hex.EncodeToString(sum)+`"`)
		resp.Header.Del("Content-Type")
		resp.Header.Set("Content-Length", "0")
		resp.ContentLength = 0
		resp.Body = http.NoBody
		return nil
	}
}
