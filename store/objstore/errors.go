package objstore

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"syscall"

	"github.com/minio/minio-go/v7"
)

// Error is an error of one operation on one object (or the bucket). It
// names the bucket and the key, never the credentials. errors.Is matches
// both its class (ErrNotExist, ErrAccessDenied, ...) and its cause.
type Error struct {
	Op       string // get, put, head, touch, delete, list, open, lease
	Bucket   string
	Key      string // the bucket key (with the prefix); "" for the bucket
	Endpoint string // set when it helps (open)
	Err      error  // the class, or the cause when it has none
	Cause    error  // what the client or the server said (may be nil)
	Attempts int    // > 1 when retries were made
}

func (e *Error) Error() string {
	var sb strings.Builder
	sb.WriteString("s3 ")
	sb.WriteString(e.Op)
	sb.WriteString(" ")
	sb.WriteString(e.Bucket)
	if e.Key != "" {
		sb.WriteString("/")
		sb.WriteString(e.Key)
	}
	if e.Endpoint != "" {
		sb.WriteString(" at ")
		sb.WriteString(e.Endpoint)
	}
	sb.WriteString(": ")
	sb.WriteString(causeText(e.Err))
	if e.Cause != nil && e.Cause != e.Err {
		sb.WriteString(" (")
		sb.WriteString(causeText(e.Cause))
		sb.WriteString(")")
	}
	if e.Attempts > 1 {
		sb.WriteString(", after ")
		sb.WriteString(itoa(e.Attempts))
		sb.WriteString(" attempts")
	}
	return sb.String()
}

func (e *Error) Unwrap() []error {
	if e.Cause == nil || e.Cause == e.Err {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// causeText is what the server said (code and message), or the client's
// error. Neither holds a secret: requests are signed in headers, which
// errors do not show.
func causeText(err error) string {
	var er minio.ErrorResponse
	if errors.As(err, &er) && er.Code != "" {
		if er.Message != "" && er.Message != er.Code {
			return er.Code + ": " + er.Message
		}
		return er.Code
	}
	return err.Error()
}

// classOf maps what the server said to the package's errors (nil when
// none fits).
func classOf(err error) error {
	var er minio.ErrorResponse
	if !errors.As(err, &er) {
		return nil
	}
	switch er.Code {
	case "NoSuchKey":
		return ErrNotExist
	case "NoSuchBucket":
		return ErrNoBucket
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken":
		return ErrAccessDenied
	case "PreconditionFailed", "ConditionalRequestConflict":
		return ErrPrecondition
	case "NotImplemented":
		return ErrNotImplemented
	}
	switch er.StatusCode {
	case http.StatusForbidden, http.StatusUnauthorized:
		return ErrAccessDenied
	case http.StatusPreconditionFailed:
		return ErrPrecondition
	case http.StatusNotFound:
		return ErrNotExist
	case http.StatusNotImplemented:
		return ErrNotImplemented
	}
	return nil
}

// wrap makes err an *Error of op on key (a relative key, or "").
func (b *Bucket) wrap(op, key string, err error, attempts int) error {
	var own *Error
	if errors.As(err, &own) {
		return err
	}
	e := &Error{Op: op, Bucket: b.cfg.Bucket, Err: err, Attempts: attempts}
	if key != "" {
		e.Key = b.full(key)
	}
	if class := classOf(err); class != nil {
		e.Err, e.Cause = class, err
	} else if unreachable(err) {
		e.Err, e.Cause, e.Endpoint = ErrUnreachable, shortNetErr(err), b.cfg.Endpoint
	}
	return e
}

// shortNetErr is what a connection's error says without the request
// around it ("connection refused", "cairn.invalid: no such host"), still
// matching all of err (errors.Is: the syscall error, a cancelled
// context joined to it).
func shortNetErr(err error) error {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return shortErr{dns.Name + ": " + dns.Err, err}
	}
	var short string
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.EHOSTUNREACH, syscall.ENETUNREACH} {
		if errors.Is(err, errno) {
			short = errno.Error()
		}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err // the context's end is what the caller asks about: all of it shown
	}
	if short == "" {
		return err
	}
	return shortErr{short, err}
}

// shortErr shows msg and matches err.
type shortErr struct {
	msg string
	err error
}

func (e shortErr) Error() string { return e.msg }
func (e shortErr) Unwrap() error { return e.err }
