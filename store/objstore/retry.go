package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
)

// errAttemptTimeout is the cause of an attempt cut by Options.Timeout.
var errAttemptTimeout = errors.New("request timed out")

// do runs f, each attempt bounded by the Timeout, retrying what
// retryable says with exponential backoff and jitter, at most Retries
// times; ctx ends it all. The error is an *Error of op on key.
func (b *Bucket) do(ctx context.Context, op, key string, f func(context.Context) error) error {
	return b.doSized(ctx, op, key, 0, f)
}

// doSized is do for a request that moves up to size bytes (its
// attempts' bound: timeoutFor).
func (b *Bucket) doSized(ctx context.Context, op, key string, size int64, f func(context.Context) error) error {
	timeout := b.timeoutFor(size)
	for attempt := 1; ; attempt++ {
		err := b.attempt(ctx, timeout, f)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return b.wrap(op, key, joinErr(ctx.Err(), err), attempt)
		}
		if !retryable(err) || attempt > b.opt.Retries || (unreachable(err) && !b.clock.answered.Load()) {
			return b.wrap(op, key, err, attempt)
		}
		if werr := b.backoff(ctx, op, key, attempt, err); werr != nil {
			return b.wrap(op, key, joinErr(werr, err), attempt)
		}
	}
}

// unreachable: the endpoint's name does not resolve, or a connection to
// it is refused or cannot be routed (what a stopped server, a wrong
// endpoint or no network gives).
func unreachable(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

// withRetries is b with at most n retries per request (a shallow copy
// sharing the client and the clock).
func (b *Bucket) withRetries(n int) *Bucket {
	c := *b
	c.opt.Retries = min(n, b.opt.Retries)
	return &c
}

// timeoutFor bounds an attempt of a request moving size bytes.
func (b *Bucket) timeoutFor(size int64) time.Duration {
	if b.opt.Timeout > 0 {
		return b.opt.Timeout
	}
	mib := (min(size, 1<<40) + 1<<20 - 1) >> 20
	return b.opt.TimeoutBase + time.Duration(mib)*TimeoutPerMiB
}

// attempt runs f once under timeout.
func (b *Bucket) attempt(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	actx, cancel := context.WithTimeoutCause(ctx, timeout, errAttemptTimeout)
	defer cancel()
	err := f(actx)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(actx), errAttemptTimeout) {
		return joinErr(errAttemptTimeout, err)
	}
	return err
}

// backoff logs a retry and waits its delay (or until ctx ends).
func (b *Bucket) backoff(ctx context.Context, op, key string, attempt int, err error) error {
	d := b.delay(attempt)
	b.opt.Logger.Info("s3 request failed, retrying",
		"op", op, "bucket", b.cfg.Bucket, "key", b.full(key),
		"attempt", attempt, "retries", b.opt.Retries, "delay", d, "err", causeText(err))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// delay is the backoff before retry n (1, 2, ...): RetryBase doubled
// n-1 times, at most RetryMax, then a random half to all of it.
func (b *Bucket) delay(n int) time.Duration {
	d := b.opt.RetryBase
	for i := 1; i < n && d < b.opt.RetryMax; i++ {
		d *= 2
	}
	d = min(d, b.opt.RetryMax)
	return d/2 + rand.N(d/2+1)
}

// retryable: server errors, throttling, timeouts, connections refused,
// reset or closed. Not: 4xx answers (access, missing, preconditions),
// nor 501 Not Implemented.
func retryable(err error) bool {
	if isWritten(err) {
		return false
	}
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.StatusCode != 0 || er.Code != "") {
		if classOf(err) == ErrNotImplemented {
			return false // asking again changes nothing
		}
		switch er.Code {
		case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable",
			"XMinioServerNotInitialized", "XMinioReadQuorum", "XMinioWriteQuorum",
			"ClientDisconnected": // MinIO's answer to requests in flight as it shuts down
			return true
		}
		return er.StatusCode >= 500 || er.StatusCode == http.StatusTooManyRequests ||
			er.StatusCode == http.StatusRequestTimeout || er.StatusCode == 499
	}
	if errors.Is(err, errAttemptTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // dial, read and write errors of the connection
	}
	return false
}

// joinErr is outer with err as its detail (both matched by errors.Is),
// or err when it already is outer.
func joinErr(outer, err error) error {
	switch {
	case outer == nil:
		return err
	case err == nil || errors.Is(err, outer):
		if err == nil {
			return outer
		}
		return err
	}
	return fmt.Errorf("%w: %w", outer, err)
}
