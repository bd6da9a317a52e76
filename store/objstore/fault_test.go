package objstore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// faults is a transport in front of the real server that answers the
// next failN requests with status (and an S3 error body of code), or
// holds the next hangN until the request's context ends.
type faults struct {
	base         http.RoundTripper
	failN, hangN atomic.Int32
	status       int
	code         string
	seen         atomic.Int32
}

func (f *faults) RoundTrip(req *http.Request) (*http.Response, error) {
	f.seen.Add(1)
	if f.hangN.Add(-1) >= 0 {
		<-req.Context().Done()
		return nil, req.Context().Err()
	}
	if f.failN.Add(-1) >= 0 {
		body := `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + f.code + `</Code><Message>injected</Message></Error>`
		h := http.Header{"Content-Type": {"application/xml"}, "Date": {time.Now().UTC().Format(http.TimeFormat)}}
		return &http.Response{StatusCode: f.status, Header: h, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: req}, nil
	}
	return f.base.RoundTrip(req)
}

// 503 SlowDown, 500, 429 and a hung request are retried; 403 and 501
// NotImplemented are not.
func TestRetryClasses(t *testing.T) {
	srv := miniotest.Start(t)
	f := &faults{base: http.DefaultTransport.(*http.Transport).Clone()}
	b, _ := srv.OpenBucket(t, objstore.Options{Transport: f, Retries: 3, RetryBase: time.Millisecond, Timeout: 2 * time.Second})
	ctx := context.Background()
	for _, tc := range []struct {
		status int
		code   string
		n      int32
		ok     bool
		tries  int32 // requests made
	}{
		{503, "SlowDown", 3, true, 4},
		{500, "InternalError", 2, true, 3},
		{429, "TooManyRequests", 1, true, 2},
		{499, "ClientDisconnected", 1, true, 2},
		{503, "SlowDown", 4, false, 4}, // more than the retries
		{403, "AccessDenied", 1, false, 1},
		{501, "NotImplemented", 1, false, 1}, // a conditional write the server does not do
		{400, "NotImplemented", 1, false, 1},
	} {
		f.status, f.code = tc.status, tc.code
		f.failN.Store(tc.n)
		f.seen.Store(0)
		_, err := b.Put(ctx, "k", objstore.Cond{}, []byte("x"))
		if (err == nil) != tc.ok {
			t.Errorf("%d %s x%d: %v", tc.status, tc.code, tc.n, err)
		}
		if tc.code == "NotImplemented" && !errors.Is(err, objstore.ErrNotImplemented) {
			t.Errorf("%d %s: %v, want ErrNotImplemented", tc.status, tc.code, err)
		}
		if f.seen.Load() != tc.tries {
			t.Errorf("%d %s x%d: %d requests, want %d", tc.status, tc.code, tc.n, f.seen.Load(), tc.tries)
		}
		f.failN.Store(0)
	}
	f.hangN.Store(1)
	if _, err := b.Head(ctx, "k"); err != nil {
		t.Fatalf("a hung attempt was not retried: %v", err)
	}
}

// A lease whose renewals fail for half its TTL (the server is down) is
// lost.
func TestLeaseLostWhenServerDown(t *testing.T) {
	srv := miniotest.StartOwn(t)
	b, _ := srv.OpenBucket(t, objstore.Options{Retries: 2, RetryBase: 10 * time.Millisecond, Timeout: time.Second})
	l, err := b.Acquire(context.Background(), "l", objstore.Holder{Host: "h"}, 2*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	select {
	case <-l.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("lease not lost with the server down")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	l.Release(ctx) //nolint:errcheck // the server is down: it fails
}

// A stalled request is cut and retried by default (no Timeout given):
// the attempt's bound is TimeoutBase plus TimeoutPerMiB per MiB moved,
// not minutes.
func TestStalledRequestRetried(t *testing.T) {
	srv := miniotest.Start(t)
	f := &faults{base: http.DefaultTransport.(*http.Transport).Clone()}
	b, _ := srv.OpenBucket(t, objstore.Options{Transport: f, RetryBase: time.Millisecond, TimeoutBase: 200 * time.Millisecond})
	ctx := context.Background()
	if _, err := b.Put(ctx, "k", objstore.Cond{}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	f.seen.Store(0)
	f.hangN.Store(2)
	data, _, err := b.Get(ctx, "k", 1<<10, nil)
	if err != nil || string(data) != "v" {
		t.Fatalf("get after two stalled attempts: %q, %v", data, err)
	}
	if n := f.seen.Load(); n != 3 {
		t.Fatalf("%d attempts, want 2 stalled and cut, then 1", n)
	}
	for _, c := range []struct {
		size int64
		want time.Duration
	}{{0, 200 * time.Millisecond}, {1, 200*time.Millisecond + time.Second}, {4 << 20, 200*time.Millisecond + 4*time.Second}, {1 << 62, 200*time.Millisecond + (1<<20)*time.Second}} {
		if got := objstore.TimeoutFor(b, c.size); got != c.want {
			t.Errorf("attempt bound for %d bytes: %v, want %v", c.size, got, c.want)
		}
	}
}
