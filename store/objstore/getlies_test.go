package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// lengthLiar passes requests to the server and replaces the
// Content-Length header of its GET answers with claim; the body stays
// the object's own.
type lengthLiar struct {
	base  http.RoundTripper
	claim string
}

func (l *lengthLiar) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK && l.claim != "" {
		resp.Header.Set("Content-Length", l.claim)
	}
	return resp, err
}

// TestGetLyingLength: a Content-Length that is not the body's size
// fails the Get, and memory follows the bytes sent, not the length
// announced: a claim of nearly the limit for a body of a few bytes
// allocates a few MiB, not the claim. Bodies larger than the buffer and
// than what a Content-Length is trusted with still read whole.
func TestGetLyingLength(t *testing.T) {
	srv := miniotest.Start(t)
	l := &lengthLiar{base: http.DefaultTransport.(*http.Transport).Clone()}
	b, _ := srv.OpenBucket(t, objstore.Options{Transport: l, Retries: 1, RetryBase: time.Millisecond})
	ctx := context.Background()
	const limit = 120 << 20
	small := []byte("a short body")
	big := bytes.Repeat([]byte("0123456789abcdef"), (9<<20+123)/16) // over 8 MiB: read as it comes
	for key, data := range map[string][]byte{"small": small, "big": big} {
		if _, err := b.Put(ctx, key, objstore.Cond{}, data); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, claim string
		key         string
		ok, tooBig  bool
	}{
		{"true length", "", "small", true, false},
		{"true length, large body", "", "big", true, false},
		{"one byte more", strconv.Itoa(len(small) + 1), "small", false, false},
		{"just under the limit", strconv.Itoa(limit - 1), "small", false, false},
		{"the limit", strconv.Itoa(limit), "small", false, false},
		{"over the limit", strconv.Itoa(limit + 1), "small", false, true},
		{"huge", "9223372036854775807", "small", false, true},
		{"one byte less", strconv.Itoa(len(small) - 1), "small", false, false},
		{"zero", "0", "small", false, false},
		{"less, large body", strconv.Itoa(len(big) - 1), "big", false, false},
		{"not a number", "12x", "small", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l.claim = tc.claim
			defer func() { l.claim = "" }()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			data, _, err := b.Get(ctx, tc.key, limit, make([]byte, 0, 64<<10))
			runtime.ReadMemStats(&after)
			want := small
			if tc.key == "big" {
				want = big
			}
			switch {
			case tc.ok && (err != nil || !bytes.Equal(data, want)):
				t.Fatalf("Get: %d bytes, %v", len(data), err)
			case !tc.ok && err == nil:
				t.Fatalf("Get took a body of %d bytes announced as %s", len(want), tc.claim)
			case tc.tooBig && !errors.Is(err, objstore.ErrTooLarge):
				t.Fatalf("Get: %v, want ErrTooLarge", err)
			}
			// two attempts (one retry), each at most 8 MiB before bytes come
			if got := after.TotalAlloc - before.TotalAlloc; tc.key == "small" && got > 32<<20 {
				t.Fatalf("Get of %d bytes announced as %s allocated %d MiB", len(small), tc.claim, got>>20)
			}
		})
	}
}
