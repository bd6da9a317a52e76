package objstore_test

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
)

// The checks of answers: an ETag that is not the body's MD5 (quoted or
// not, any case) and a touch whose time is older than its request are
// ErrBadAnswer; a multipart ETag and a bucket whose ETags are not MD5s
// are not checked by ETag.
func TestCheckAnswers(t *testing.T) {
	cfg := objstore.Config{Bucket: "b", Prefix: "p"}
	body := []byte("chunk")
	sum := objstore.BodyMD5(body[:2], body[2:])
	if want := md5.Sum(body); sum != want {
		t.Fatalf("BodyMD5 of parts %x, want %x", sum, want)
	}
	good := hex.EncodeToString(sum[:])
	empty := md5.Sum(nil)
	for _, c := range []struct {
		etag string
		cfg  objstore.Config
		bad  bool
	}{
		{good, cfg, false},
		{`"` + good + `"`, cfg, false},
		{"ABC" + good[3:], cfg, good[:3] != "abc"},
		{hex.EncodeToString(empty[:]), cfg, true},
		{"", cfg, true},
		{"garbage", cfg, true},
		{good[:30] + "-3", cfg, false},
		{hex.EncodeToString(empty[:]), objstore.Config{Bucket: "b", ETagNotMD5: true}, false},
	} {
		err := objstore.CheckPutETag(c.cfg, "k", c.etag, sum)
		if bad := errors.Is(err, objstore.ErrBadAnswer); bad != c.bad || (err != nil) != c.bad {
			t.Errorf("ETag %q (etag_not_md5 %v): %v, want bad %v", c.etag, c.cfg.ETagNotMD5, err, c.bad)
		}
	}
	sent := time.Date(2026, 12, 4, 12, 0, 0, 500e6, time.UTC)
	for _, c := range []struct {
		lm  time.Time
		bad bool
	}{
		{sent, false},
		{sent.Add(time.Minute), false},
		{sent.Truncate(time.Second), false}, // HTTP dates' second
		{sent.Add(-2 * time.Second), true},
		{time.Unix(1_600_000_000, 0), true},
		{time.Time{}, true},
	} {
		err := objstore.CheckTouch(cfg, "k", c.lm, sent)
		if bad := errors.Is(err, objstore.ErrBadAnswer); bad != c.bad || (err != nil) != c.bad {
			t.Errorf("touch answered %v for a request at %v: %v, want bad %v", c.lm, sent, err, c.bad)
		}
	}
}
