package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/minio/minio-go/v7"
)

// Get reads a whole object of at most limit bytes into buf (reused when
// large enough). An object larger than limit is refused with ErrTooLarge
// before its data is read (by its Content-Length; a body longer than
// announced is refused too).
func (b *Bucket) Get(ctx context.Context, key string, limit int64, buf []byte) ([]byte, ObjectInfo, error) {
	if err := b.checkKey("get", key); err != nil {
		return nil, ObjectInfo{}, err
	}
	var out []byte
	var info ObjectInfo
	err := b.doSized(ctx, "get", key, limit, func(ctx context.Context) error {
		rc, oi, _, err := b.core.GetObject(ctx, b.cfg.Bucket, b.full(key), minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer rc.Close()
		info = b.info(key, oi)
		out, err = readBounded(rc, oi.Size, limit, buf)
		return err
	})
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	info.Size = int64(len(out))
	return out, info, nil
}

// errTooLarge is the not-retried error of an object over its limit.
type errTooLarge struct{ size, limit int64 }

func (e errTooLarge) Error() string {
	if e.size < 0 {
		return fmt.Sprintf("object too large: more than the limit of %d bytes", e.limit)
	}
	return fmt.Sprintf("object too large: %d bytes, the limit is %d", e.size, e.limit)
}
func (e errTooLarge) Is(target error) bool { return target == ErrTooLarge }

// trustedSize is the most memory a body's Content-Length alone may
// take before the bytes come: beyond it (and beyond the caller's
// buffer), memory grows with what arrives, so that a server announcing
// more than it sends costs no more than what it sent.
const trustedSize = 8 << 20

// readBounded reads a body of the announced size (-1: unknown) of at
// most limit bytes into buf's storage: a body that fits buf is read
// straight into it, in one go.
func readBounded(r io.Reader, size, limit int64, buf []byte) ([]byte, error) {
	if size > limit {
		return nil, errTooLarge{size, limit}
	}
	if size < 0 { // no Content-Length: read at most limit+1 bytes
		out := bytes.NewBuffer(buf[:0])
		if _, err := out.ReadFrom(io.LimitReader(r, plusOne(limit))); err != nil {
			return nil, err
		}
		if int64(out.Len()) > limit {
			return nil, errTooLarge{-1, limit}
		}
		return out.Bytes(), nil
	}
	buf, err := readSized(r, size, buf)
	if err != nil {
		return nil, err
	}
	var one [1]byte
	if n, _ := io.ReadFull(r, one[:]); n != 0 {
		return nil, fmt.Errorf("body longer than its Content-Length of %d bytes", size)
	}
	return buf, nil
}

// readSized reads size bytes into buf's storage, or into a new buffer
// of at most trustedSize that grows (doubling) as the bytes come.
func readSized(r io.Reader, size int64, buf []byte) ([]byte, error) {
	n := min(size, max(int64(cap(buf)), trustedSize))
	if int64(cap(buf)) < n {
		buf = make([]byte, 0, n)
	}
	buf = buf[:n]
	got := 0
	for {
		m, err := io.ReadFull(r, buf[got:])
		got += m
		if err != nil {
			return nil, fmt.Errorf("reading %d bytes (%d came): %w", size, got, err)
		}
		if int64(got) == size {
			return buf, nil
		}
		n := int(min(size, 2*int64(got)))
		buf = slices.Grow(buf, n-got)[:n]
	}
}

func (b *Bucket) info(key string, oi minio.ObjectInfo) ObjectInfo {
	return ObjectInfo{Key: key, Size: oi.Size, LastModified: oi.LastModified, ETag: oi.ETag}
}

// Put writes data (the concatenation of parts, sent one after the other
// without copying them together) to key under cond, in one request,
// with its Content-MD5 (the server checks the body) and the answer's
// ETag checked against it (CheckPutETag)
// (objects here are chunks, indexes and manifests: no multipart upload).
// A precondition not met is ErrPrecondition. A retried IfAbsent Put whose
// first attempt reached the server but not its answer sees its own
// object and reports ErrPrecondition: callers to whom that matters
// compare contents (leases carry a token for it).
//
// The returned LastModified is the server's clock when it answered (by
// its Date header, within a second of the object's own LastModified).
func (b *Bucket) Put(ctx context.Context, key string, cond Cond, parts ...[]byte) (ObjectInfo, error) {
	if err := b.checkKey("put", key); err != nil {
		return ObjectInfo{}, err
	}
	var size int64
	for _, p := range parts {
		size += int64(len(p))
	}
	opts := putOptions(cond)
	sum := BodyMD5(parts...)
	var ui minio.UploadInfo
	err := b.doSized(ctx, "put", key, size, func(ctx context.Context) error {
		readers := make([]io.Reader, len(parts))
		for i, p := range parts {
			readers[i] = bytes.NewReader(p)
		}
		var err error
		ui, err = b.core.PutObject(ctx, b.cfg.Bucket, b.full(key), io.MultiReader(readers...), size, md5Base64(sum), "", opts)
		return err
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := CheckPutETag(b.cfg, key, ui.ETag, sum); err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: size, LastModified: b.ServerTime(), ETag: ui.ETag}, nil
}

// Head describes key.
func (b *Bucket) Head(ctx context.Context, key string) (ObjectInfo, error) {
	if err := b.checkKey("head", key); err != nil {
		return ObjectInfo{}, err
	}
	var info ObjectInfo
	err := b.do(ctx, "head", key, func(ctx context.Context) error {
		oi, err := b.client.StatObject(ctx, b.cfg.Bucket, b.full(key), minio.StatObjectOptions{})
		info = b.info(key, oi)
		return err
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	return info, nil
}

// Touch copies key onto itself so that its LastModified becomes now. S3
// refuses a copy onto itself that changes nothing: the copy replaces the
// user metadata with x-amz-meta-touched=<server-ish unix ns>. Size is -1
// (a copy does not say it); ETag and LastModified are the new object's,
// and an answer whose LastModified is older than the request is an error
// (CheckTouch: the copy was not made).
func (b *Bucket) Touch(ctx context.Context, key string) (ObjectInfo, error) {
	if err := b.checkKey("touch", key); err != nil {
		return ObjectInfo{}, err
	}
	var ui minio.UploadInfo
	sent := b.ServerTime()
	err := b.do(ctx, "touch", key, func(ctx context.Context) error {
		var err error
		ui, err = b.client.CopyObject(ctx,
			minio.CopyDestOptions{
				Bucket: b.cfg.Bucket, Object: b.full(key), ReplaceMetadata: true,
				UserMetadata: map[string]string{"Touched": strconv.FormatInt(time.Now().UnixNano(), 10)},
			},
			minio.CopySrcOptions{Bucket: b.cfg.Bucket, Object: b.full(key)})
		return err
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	if err := CheckTouch(b.cfg, key, ui.LastModified, sent); err != nil {
		return ObjectInfo{}, err
	}
	return ObjectInfo{Key: key, Size: -1, LastModified: ui.LastModified, ETag: ui.ETag}, nil
}

// deleteBatch is the most keys one DeleteObjects request takes.
const deleteBatch = 1000

// Delete removes keys; missing ones are not an error. Keys go in batches
// of 1000 (one request each), each batch retried as a whole (deleting
// again is harmless).
func (b *Bucket) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		if err := b.checkKey("delete", k); err != nil {
			return err
		}
	}
	for len(keys) > 0 {
		n := min(len(keys), deleteBatch)
		if err := b.deleteBatch(ctx, keys[:n]); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

func (b *Bucket) deleteBatch(ctx context.Context, keys []string) error {
	var failed string
	err := b.do(ctx, "delete", keys[0], func(ctx context.Context) error {
		ch := make(chan minio.ObjectInfo, len(keys))
		for _, k := range keys {
			ch <- minio.ObjectInfo{Key: b.full(k)}
		}
		close(ch)
		var first error
		for re := range b.client.RemoveObjects(ctx, b.cfg.Bucket, ch, minio.RemoveObjectsOptions{}) {
			if re.Err == nil || classOf(re.Err) == ErrNotExist {
				continue
			}
			if first == nil {
				first, failed = re.Err, re.ObjectName
			}
		}
		return first
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) && failed != "" {
			e.Key = failed
		}
		return err
	}
	return nil
}
