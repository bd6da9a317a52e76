package objstore

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"
)

// Options tune a Bucket.
type Options struct {
	// Transport replaces the HTTP transport (tests: a latency proxy is
	// reached through the endpoint instead; this is for fault injection).
	Transport http.RoundTripper
	// Retries is how many times a failed request is retried (5xx,
	// throttling, timeouts, connection errors) with exponential backoff
	// and jitter; 0 means the default (8).
	Retries int
	// Timeout bounds one request attempt; 0 means by its size:
	// TimeoutBase plus TimeoutPerMiB for each MiB the request sends or
	// may receive (a stalled request is cut and retried, not waited out).
	Timeout time.Duration
	// TimeoutBase is the bound of an attempt that moves no data when
	// Timeout is 0; 0 means DefaultTimeoutBase.
	TimeoutBase time.Duration
	// RetryBase is the first backoff (doubled at each retry, up to
	// RetryMax, with jitter); 0 means 200 ms.
	RetryBase time.Duration
	// RetryMax caps one backoff; 0 means 15 s.
	RetryMax time.Duration
	// Logger receives the retries (at Info: one that succeeds is no news;
	// one that fails for good is the request's error) and the leases'
	// warnings; nil: nothing is logged.
	Logger *slog.Logger
}

// Defaults of Options.
const (
	DefaultRetries = 8
	// DefaultTimeoutBase and TimeoutPerMiB bound one attempt of a
	// request: 15 s, and 1 s more per MiB (a 4 MiB chunk: 19 s), that
	// is a link of 1 MiB/s at least.
	DefaultTimeoutBase = 15 * time.Second
	TimeoutPerMiB      = time.Second
	DefaultRetryBase   = 200 * time.Millisecond
	DefaultRetryMax    = 15 * time.Second
)

func (o Options) withDefaults() Options {
	if o.Retries <= 0 {
		o.Retries = DefaultRetries
	}
	if o.TimeoutBase <= 0 {
		o.TimeoutBase = DefaultTimeoutBase
	}
	if o.RetryBase <= 0 {
		o.RetryBase = DefaultRetryBase
	}
	if o.RetryMax <= 0 {
		o.RetryMax = DefaultRetryMax
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Bucket is an open bucket: safe for concurrent use.
type Bucket struct {
	cfg    Config
	opt    Options
	client *minio.Client
	core   minio.Core
	clock  *clock
}

// Config returns the configuration the bucket was opened with.
func (b *Bucket) Config() Config { return b.cfg }

// Open checks that the bucket exists and the credentials work.
func Open(ctx context.Context, cfg Config, cred Credentials, opt Options) (*Bucket, error) {
	b, err := Client(cfg, cred, opt)
	if err != nil {
		return nil, err
	}
	var exists bool
	err = b.do(ctx, "open", "", func(ctx context.Context) error {
		var err error
		exists, err = b.client.BucketExists(ctx, cfg.Bucket)
		return err
	})
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, &Error{Op: "open", Bucket: cfg.Bucket, Endpoint: cfg.Endpoint, Err: ErrNoBucket}
	}
	return b, nil
}

// Client is the bucket cfg names, without a request: what Open returns
// before it checks (a store whose bucket is unreachable reads its local
// mirror through one; every request fails as long as it stays so).
func Client(cfg Config, cred Credentials, opt Options) (*Bucket, error) {
	u, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	if cred.AccessKey == "" || cred.SecretKey == "" {
		return nil, fmt.Errorf("s3 bucket %s: no access key or secret key", cfg.Bucket)
	}
	opt = opt.withDefaults()
	base := opt.Transport
	if base == nil {
		t, err := minio.DefaultTransport(u.Scheme == "https")
		if err != nil {
			return nil, fmt.Errorf("s3 bucket %s: transport: %w", cfg.Bucket, err)
		}
		// Uploads run in parallel: keep as many connections as they use.
		t.MaxIdleConnsPerHost = 256
		base = t
	}
	clk := &clock{base: base}
	lookup := minio.BucketLookupAuto
	if cfg.PathStyle {
		lookup = minio.BucketLookupPath
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cred.AccessKey, cred.SecretKey, cred.SessionToken),
		Secure:       u.Scheme == "https",
		Transport:    clk,
		Region:       cfg.Region,
		BucketLookup: lookup,
		MaxRetries:   1, // the retries are ours (retry.go)
	})
	if err != nil {
		return nil, fmt.Errorf("s3 bucket %s at %s: %w", cfg.Bucket, u.Host, err)
	}
	return &Bucket{cfg: cfg, opt: opt, client: client, core: minio.Core{Client: client}, clock: clk}, nil
}

// checkConfig refuses a configuration that cannot name a bucket safely.
func checkConfig(cfg Config) (*url.URL, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("s3 endpoint %q: not an http:// or https:// URL", cfg.Endpoint)
	}
	if u.User != nil {
		return nil, fmt.Errorf("s3 endpoint: must not hold credentials (use a credentials file or AWS_* variables)")
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("s3 endpoint %q: must be scheme://host[:port] only", cfg.Endpoint)
	}
	if err := checkBucketName(cfg.Bucket); err != nil {
		return nil, err
	}
	if err := checkPrefix(cfg.Prefix); err != nil {
		return nil, err
	}
	return u, nil
}

func checkBucketName(name string) error {
	if name == "" {
		return fmt.Errorf("s3: empty bucket name")
	}
	if err := s3utils.CheckValidBucketNameStrict(name); err != nil {
		return fmt.Errorf("s3 bucket name %q: %v", name, err)
	}
	return nil
}

// checkPrefix: "" or slash-separated segments, none empty, "." or "..".
func checkPrefix(p string) error {
	if p == "" {
		return nil
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("s3 prefix %q: empty, \".\" or \"..\" segment (no leading, trailing or double slash)", p)
		}
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return fmt.Errorf("s3 prefix %q: control character or backslash", p)
		}
	}
	return nil
}

// ParseURL splits s3://BUCKET/PREFIX.
func ParseURL(u string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return "", "", fmt.Errorf("s3 URL %q: must start with s3://", u)
	}
	if strings.ContainsAny(rest, "?#") {
		return "", "", fmt.Errorf("s3 URL %q: no query or fragment allowed", u)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	if err := checkBucketName(bucket); err != nil {
		return "", "", fmt.Errorf("s3 URL %q: %w", u, err)
	}
	prefix = strings.TrimSuffix(prefix, "/")
	if err := checkPrefix(prefix); err != nil {
		return "", "", fmt.Errorf("s3 URL %q: %w", u, err)
	}
	return bucket, prefix, nil
}

// full is the bucket key of key (relative to the prefix).
func (b *Bucket) full(key string) string {
	if b.cfg.Prefix == "" {
		return key
	}
	return b.cfg.Prefix + "/" + key
}

// rel is the key of a bucket key under the prefix.
func (b *Bucket) rel(full string) (string, bool) {
	if b.cfg.Prefix == "" {
		return full, true
	}
	return strings.CutPrefix(full, b.cfg.Prefix+"/")
}

// checkKey refuses a key the store could not have meant.
func (b *Bucket) checkKey(op, key string) error {
	if key == "" || strings.HasPrefix(key, "/") {
		return &Error{Op: op, Bucket: b.cfg.Bucket, Key: b.full(key), Err: fmt.Errorf("invalid key %q", key)}
	}
	return nil
}
