package objstore_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/logtest"
	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store/objstore"
)

// The server stopped and started again within the retry window: the
// request made meanwhile succeeds, after retries it logged (without a
// secret). Stopped for good: the bounded retries end in a clear error.
func TestRetryServerDown(t *testing.T) {
	srv := miniotest.StartOwn(t)
	var logs logtest.Buffer
	// The outage lasts from the first retry until the server is back,
	// however long its start takes on a loaded machine: the put's
	// retries are not bounded in number here, and end with the restart
	// if that fails (bounded retries are the second half's).
	opt := objstore.Options{
		Retries: 1 << 20, RetryBase: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond,
		Timeout: 5 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}
	b, _ := srv.OpenBucket(t, opt)
	ctx := context.Background()
	if _, err := b.Put(ctx, "k", objstore.Cond{}, []byte("before")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	putCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		<-logs.Seen("retrying")
		if err := srv.Restart(); err != nil {
			cancel(err)
		}
	}()
	if _, err := b.Put(putCtx, "k", objstore.Cond{}, []byte("during"), []byte(" outage")); err != nil {
		t.Fatalf("put across a restart: %v (%v)", err, context.Cause(putCtx))
	}
	if data, _, err := b.Get(ctx, "k", 100, nil); err != nil || string(data) != "during outage" {
		t.Fatalf("after the restart: %q %v", data, err)
	}
	out := logs.String()
	if !strings.Contains(out, "retrying") || strings.Contains(out, srv.SecretKey) {
		t.Fatalf("retry log %q (want retries logged, no secret)", out)
	}

	// Down for good: a few quick retries, then an error that says what.
	short, _ := srv.OpenBucket(t, objstore.Options{Retries: 3, RetryBase: 10 * time.Millisecond, Timeout: time.Second, Logger: opt.Logger})
	patient, _ := srv.OpenBucket(t, objstore.Options{Retries: 1000, RetryBase: time.Second, Logger: opt.Logger})
	srv.Stop()
	start := time.Now()
	_, _, err := short.Get(ctx, "k", 100, nil)
	if err == nil {
		t.Fatal("get with the server down succeeded")
	}
	msg := err.Error()
	var e *objstore.Error
	if !errors.As(err, &e) || e.Attempts != 4 || !strings.Contains(msg, "4 attempts") || !strings.Contains(msg, "refused") {
		t.Fatalf("server down: %v", err)
	}
	if strings.Contains(msg, srv.SecretKey) {
		t.Fatalf("message shows the secret: %s", msg)
	}
	t.Logf("down for good after %v: %s", time.Since(start), msg)
	// The caller's context ends the retries at once.
	cctx, stop := context.WithCancel(ctx)
	go func() { time.Sleep(100 * time.Millisecond); stop() }()
	if _, err := patient.Head(cctx, "k"); !errors.Is(err, context.Canceled) {
		t.Fatalf("head with a cancelled context: %v", err)
	}
}
