package objstore

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/minio/minio-go/v7"
)

// Thresholds of PutReader (variables for the tests).
var (
	// singlePutMax: objects up to this size go in one PUT.
	singlePutMax int64 = 512 << 20
	// minPartSize: the smallest part of a multipart upload (S3 wants
	// >= 5 MiB; at most 10000 parts, so large objects get larger parts).
	minPartSize int64 = 64 << 20
)

// PutReader uploads size bytes read from r under cond: in one request up
// to 512 MiB, else as a multipart upload (parts of 64 MiB or more, the
// conditions applied when it completes). r is read again from 0 on a
// retry.
func (b *Bucket) PutReader(ctx context.Context, key string, cond Cond, r io.ReaderAt, size int64) (ObjectInfo, error) {
	if err := b.checkKey("put", key); err != nil {
		return ObjectInfo{}, err
	}
	if size < 0 {
		return ObjectInfo{}, b.wrap("put", key, fmt.Errorf("negative size %d", size), 1)
	}
	opts := putOptions(cond)
	var sum [md5.Size]byte
	if size <= singlePutMax {
		var err error
		if sum, err = md5Of(r, size); err != nil {
			return ObjectInfo{}, b.wrap("put", key, err, 1)
		}
	}
	var ui minio.UploadInfo
	err := b.doSized(ctx, "put", key, size, func(ctx context.Context) error {
		var err error
		body := io.NewSectionReader(r, 0, size)
		if size <= singlePutMax {
			ui, err = b.core.PutObject(ctx, b.cfg.Bucket, b.full(key), body, size, md5Base64(sum), "", opts)
			return err
		}
		mopts := opts
		mopts.SendContentMd5 = true
		mopts.DisableMultipart = false
		mopts.PartSize = uint64(max(minPartSize, (size+9999)/10000))
		mopts.NumThreads = 4
		ui, err = b.client.PutObject(ctx, b.cfg.Bucket, b.full(key), body, size, mopts)
		return err
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	if size <= singlePutMax {
		if err := CheckPutETag(b.cfg, key, ui.ETag, sum); err != nil {
			return ObjectInfo{}, err
		}
	}
	return ObjectInfo{Key: key, Size: size, LastModified: b.ServerTime(), ETag: ui.ETag}, nil
}

// putOptions are the options of a single PUT under cond.
func putOptions(cond Cond) minio.PutObjectOptions {
	opts := minio.PutObjectOptions{
		DisableMultipart: true,
		// Payloads are not hashed for the signature (UNSIGNED-PAYLOAD):
		// hashing every byte costs more than the upload on loopback, and
		// what cairn stores is verified by its own digests when read.
		DisableContentSha256: true,
	}
	if cond.IfAbsent {
		opts.SetMatchETagExcept("*")
	}
	if cond.IfMatch != "" {
		opts.SetMatchETag(cond.IfMatch)
	}
	return opts
}

// errWritten marks a failure after GetTo wrote to its writer: not retried
// (the writer cannot take the bytes back).
type errWritten struct{ err error }

func (e errWritten) Error() string { return e.err.Error() + " (after part of it was written)" }
func (e errWritten) Unwrap() error { return e.err }

// GetTo streams an object of at most limit bytes into w. A larger one is
// refused with ErrTooLarge before anything is written. Failures before
// the first byte is written are retried; later ones are returned (the
// caller discards what w got).
func (b *Bucket) GetTo(ctx context.Context, key string, limit int64, w io.Writer) (ObjectInfo, error) {
	if err := b.checkKey("get", key); err != nil {
		return ObjectInfo{}, err
	}
	var info ObjectInfo
	err := b.doSized(ctx, "get", key, limit, func(ctx context.Context) error {
		rc, oi, _, err := b.core.GetObject(ctx, b.cfg.Bucket, b.full(key), minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer rc.Close()
		if oi.Size > limit {
			return errTooLarge{oi.Size, limit}
		}
		info = b.info(key, oi)
		n, err := io.Copy(w, io.LimitReader(rc, plusOne(limit)))
		switch {
		case err == nil && n > limit:
			err = errTooLarge{-1, limit}
		case err == nil && oi.Size >= 0 && n != oi.Size:
			err = fmt.Errorf("read %d bytes of an object of %d", n, oi.Size)
		case err == nil:
			info.Size = n
			return nil
		}
		if n > 0 {
			return errWritten{err}
		}
		return err
	})
	if err != nil {
		return ObjectInfo{}, err
	}
	return info, nil
}

// isWritten reports a GetTo failure that must not be retried.
func isWritten(err error) bool {
	var w errWritten
	return errors.As(err, &w)
}

// plusOne is n+1, without overflowing.
func plusOne(n int64) int64 {
	if n == math.MaxInt64 {
		return n
	}
	return n + 1
}
