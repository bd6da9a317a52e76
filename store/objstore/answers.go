package objstore

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// What an answer of the server must show before the client takes it as
// done: a Put's ETag is the MD5 of the body sent (S3's ETag of a single
// PUT not encrypted with SSE-KMS or SSE-C; Config.ETagNotMD5 says the
// bucket's are not), and a Touch's LastModified is not older than the
// request. The server checks the body against the Content-MD5 sent with
// it; these checks catch what answers for a server that did not store
// (a proxy, a cache, a broken gateway). The in-memory bucket (memstore)
// applies the same checks to its answers.

// ErrBadAnswer: an answer that does not show that the request was done
// (an ETag that is not the body's MD5, a touch that moved no time).
var ErrBadAnswer = errors.New("the server's answer does not show the request done")

// BodyMD5 is the MD5 of the concatenation of parts.
func BodyMD5(parts ...[]byte) [md5.Size]byte {
	h := md5.New()
	for _, p := range parts {
		h.Write(p)
	}
	var sum [md5.Size]byte
	h.Sum(sum[:0])
	return sum
}

// md5Base64 is sum as a Content-MD5 header's value.
func md5Base64(sum [md5.Size]byte) string { return base64.StdEncoding.EncodeToString(sum[:]) }

// CheckPutETag checks the ETag a Put of a body whose MD5 is sum was
// answered with (quotes ignored). A multipart upload's ETag ("<md5>-N")
// is not a body's MD5 and is not checked here.
func CheckPutETag(cfg Config, key, etag string, sum [md5.Size]byte) error {
	etag = strings.Trim(etag, `"`)
	if cfg.ETagNotMD5 || strings.Contains(etag, "-") {
		return nil
	}
	if want := hex.EncodeToString(sum[:]); !strings.EqualFold(etag, want) {
		return &Error{Op: "put", Bucket: cfg.Bucket, Key: fullOf(cfg, key), Err: ErrBadAnswer,
			Cause: fmt.Errorf("answered with ETag %q, the body's MD5 is %s: the object may not be stored (a bucket whose ETags are not MD5s, SSE-KMS or SSE-C, needs etag_not_md5 in remote.json)", etag, want)}
	}
	return nil
}

// touchSlack is how much older than the request a Touch's LastModified
// may be: HTTP dates have a second's resolution.
const touchSlack = time.Second

// CheckTouch checks the LastModified a Touch sent at the server's time
// sent was answered with.
func CheckTouch(cfg Config, key string, lastModified, sent time.Time) error {
	if lastModified.IsZero() || lastModified.Before(sent.Add(-touchSlack)) {
		return &Error{Op: "touch", Bucket: cfg.Bucket, Key: fullOf(cfg, key), Err: ErrBadAnswer,
			Cause: fmt.Errorf("answered with LastModified %s, older than the request (%s): the copy was not made",
				lastModified.UTC().Format(time.RFC3339), sent.UTC().Format(time.RFC3339))}
	}
	return nil
}

// fullOf is key with cfg's prefix.
func fullOf(cfg Config, key string) string {
	if cfg.Prefix == "" {
		return key
	}
	return cfg.Prefix + "/" + key
}

// md5Of is the MD5 of r's bytes [0, size).
func md5Of(r io.ReaderAt, size int64) ([md5.Size]byte, error) {
	h := md5.New()
	var sum [md5.Size]byte
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, size)); err != nil {
		return sum, err
	}
	h.Sum(sum[:0])
	return sum, nil
}
