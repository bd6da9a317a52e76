package objstore

// This file is the package's API as the store builds on it (written
// first, so that its users and its implementation could be built side by
// side). The implementation lives in the package's other files.

import (
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// Errors of the package, matched with errors.Is.
var (
	// ErrNotExist: no such object (also matches fs.ErrNotExist).
	ErrNotExist = &notExist{}
	// ErrPrecondition: a conditional write found the object in another
	// state (If-None-Match: it exists; If-Match: its ETag differs).
	ErrPrecondition = errors.New("precondition failed")
	// ErrAccessDenied: the credentials are wrong or not allowed.
	ErrAccessDenied = errors.New("access denied")
	// ErrNoBucket: the bucket does not exist.
	ErrNoBucket = errors.New("no such bucket")
	// ErrTooLarge: an object larger than the caller's limit.
	ErrTooLarge = errors.New("object too large")
	// ErrHeld: a lease another holder has and renews (see *HeldError).
	ErrHeld = errors.New("held by another holder")
	// ErrNotImplemented: the server does not do what the request asks
	// (S3's NotImplemented, 501: a conditional write it does not
	// support). Not retried.
	ErrNotImplemented = errors.New("not implemented by the server")
	// ErrUnreachable: the endpoint cannot be reached (its name does not
	// resolve, or it refuses or cannot be routed to). Not retried before
	// the bucket has answered once in this process: a store that was
	// never reached fails in a moment, not after the retries.
	ErrUnreachable = errors.New("unreachable")
)

type notExist struct{}

func (*notExist) Error() string        { return "no such object" }
func (*notExist) Is(target error) bool { return target == fs.ErrNotExist }

// Config names a bucket and how to reach it. It holds no secret.
type Config struct {
	Endpoint  string `json:"endpoint"`   // URL: http://127.0.0.1:9000, https://s3.eu-west-1.amazonaws.com
	Bucket    string `json:"bucket"`     // bucket name
	Prefix    string `json:"prefix"`     // key prefix ("" or "a/b", no leading or trailing slash)
	Region    string `json:"region"`     // "" lets the client discover it
	PathStyle bool   `json:"path_style"` // http://host/bucket/key rather than http://bucket.host/key
	// ETagNotMD5 tells that the bucket's ETags are not the MD5 of what
	// was stored (SSE-KMS or SSE-C encryption): a Put's answer is then
	// not checked by its ETag (the server still checks Content-MD5).
	ETagNotMD5 bool `json:"etag_not_md5,omitempty"`
	// CredentialsFile, when set, is read for the keys (see
	// LoadCredentials); otherwise the AWS_* environment variables are.
	CredentialsFile string `json:"credentials_file,omitempty"`
}

// Credentials are the keys a request is signed with. String never shows
// the secret.
type Credentials struct {
	AccessKey    string
	SecretKey    string
	SessionToken string
}

// ObjectInfo describes one object. LastModified is the server's clock.
type ObjectInfo struct {
	Key          string // relative to the configured prefix
	Size         int64
	LastModified time.Time
	ETag         string
}

// Cond is the condition a Put is made under.
type Cond struct {
	IfAbsent bool   // If-None-Match: * (create only)
	IfMatch  string // If-Match: ETag (replace only that version)
}

// Holder names who holds a lease, for messages ("held by backup, PID 42 on
// host h since ...") and for what the holder wants others to know (Data).
type Holder struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Command string    `json:"command"`
	Data    []byte    `json:"data,omitempty"` // the holder's own payload (JSON)
	Start   time.Time `json:"start"`          // server time of the lease's creation (set by Acquire)
}

// LeaseInfo is a lease as listed by Leases.
type LeaseInfo struct {
	Key     string
	Holder  Holder
	Renewed time.Time // server time of the last renewal (the object's LastModified)
	Expired bool      // not renewed within its TTL, by the server's clock
}

// HeldError is the error of Acquire when another holder has the lease
// (errors.Is(err, ErrHeld)).
type HeldError struct {
	Key    string
	Holder Holder
}

func (e *HeldError) Error() string {
	h := e.Holder
	if h.Host == "" && h.Command == "" && h.PID == 0 {
		return "lease " + e.Key + " held (its object names no holder; it expires by its age)"
	}
	msg := fmt.Sprintf("lease %s held by %q, PID %d on host %q", e.Key, h.Command, h.PID, h.Host)
	if !h.Start.IsZero() {
		msg += " since " + h.Start.UTC().Format(time.RFC3339)
	}
	return msg
}
func (e *HeldError) Unwrap() error { return ErrHeld }
