package memstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
)

// Bucket is an in-memory objstore.Objects, safe for concurrent use.
type Bucket struct {
	cfg    objstore.Config
	logger *slog.Logger
	offset atomic.Int64 // added to time.Now: Advance
	timers timers

	mu   sync.Mutex
	objs map[string]*object
	hook Hook
}

// object is an object as stored; never changed once stored (a touch
// stores a new one), so that it is read without the lock.
type object struct {
	data []byte
	lm   time.Time
	etag string
}

var _ objstore.Objects = (*Bucket)(nil)

// New is an empty bucket named by cfg (cfg.Bucket "" becomes "mem").
func New(cfg objstore.Config) *Bucket {
	if cfg.Bucket == "" {
		cfg.Bucket = "mem"
	}
	return &Bucket{cfg: cfg, logger: slog.New(slog.DiscardHandler), objs: make(map[string]*object)}
}

// SetLogger sets the logger the bucket hands its users (Logger).
func (b *Bucket) SetLogger(l *slog.Logger) { b.logger = l }

// SetHook sets the hook every call goes through (nil: none).
func (b *Bucket) SetHook(h Hook) {
	b.mu.Lock()
	b.hook = h
	b.mu.Unlock()
}

// Config implements objstore.Objects.
func (b *Bucket) Config() objstore.Config { return b.cfg }

// ServerTime implements objstore.Objects.
func (b *Bucket) ServerTime() time.Time {
	return time.Now().Add(time.Duration(b.offset.Load()))
}

// Logger implements objstore.Objects.
func (b *Bucket) Logger() *slog.Logger { return b.logger }

// Keys lists the keys held under prefix (what is there, whatever the
// hook makes calls answer).
func (b *Bucket) Keys(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var keys []string
	for k := range b.objs {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// Has tells whether key is held (whatever the hook says).
func (b *Bucket) Has(key string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.objs[key] != nil
}

// call runs the hook for c; err is the call's error.
func (b *Bucket) call(ctx context.Context, c *Call) error {
	if err := ctx.Err(); err != nil {
		return b.fail(c, err)
	}
	b.mu.Lock()
	h := b.hook
	b.mu.Unlock()
	if h == nil {
		return nil
	}
	if err := h(ctx, c); err != nil {
		return b.fail(c, err)
	}
	return nil
}

// fail wraps err as objstore's errors are.
func (b *Bucket) fail(c *Call, err error) error {
	e := &objstore.Error{Op: string(c.Op), Bucket: b.cfg.Bucket, Key: c.Key, Err: err}
	return e
}

func (b *Bucket) info(key string, o *object) objstore.ObjectInfo {
	return objstore.ObjectInfo{Key: key, Size: int64(len(o.data)), LastModified: o.lm, ETag: o.etag}
}

func (b *Bucket) notExist(op Op, key string) error {
	return &objstore.Error{Op: string(op), Bucket: b.cfg.Bucket, Key: key, Err: objstore.ErrNotExist}
}

// Get implements objstore.Objects.
func (b *Bucket) Get(ctx context.Context, key string, limit int64, buf []byte) ([]byte, objstore.ObjectInfo, error) {
	c := &Call{Op: OpGet, Key: key}
	if err := b.call(ctx, c); err != nil {
		return nil, objstore.ObjectInfo{}, err
	}
	b.mu.Lock()
	o := b.objs[key]
	b.mu.Unlock()
	if o == nil {
		return nil, objstore.ObjectInfo{}, b.notExist(OpGet, key)
	}
	if int64(len(o.data)) > limit {
		return nil, objstore.ObjectInfo{}, &objstore.Error{Op: "get", Bucket: b.cfg.Bucket, Key: key,
			Err: objstore.ErrTooLarge, Cause: fmt.Errorf("%d bytes, the limit is %d", len(o.data), limit)}
	}
	return append(buf[:0], o.data...), b.info(key, o), nil
}

// GetTo implements objstore.Objects.
func (b *Bucket) GetTo(ctx context.Context, key string, limit int64, w io.Writer) (objstore.ObjectInfo, error) {
	data, info, err := b.Get(ctx, key, limit, nil)
	if err != nil {
		return info, err
	}
	_, err = w.Write(data)
	return info, err
}

// Put implements objstore.Objects.
func (b *Bucket) Put(ctx context.Context, key string, cond objstore.Cond, parts ...[]byte) (objstore.ObjectInfo, error) {
	c := &Call{Op: OpPut, Key: key, Cond: cond}
	if err := b.call(ctx, c); err != nil {
		return objstore.ObjectInfo{}, err
	}
	data := bytes.Join(parts, nil)
	sum := objstore.BodyMD5(data)
	etag := hex.EncodeToString(sum[:])
	if c.Lie == LieNotStored {
		empty := md5.Sum(nil)
		etag = hex.EncodeToString(empty[:])
	} else {
		b.mu.Lock()
		cur := b.objs[key]
		switch {
		case c.Lie == LieCondIgnored:
		case cond.IfAbsent && cur != nil, cond.IfMatch != "" && (cur == nil || cur.etag != cond.IfMatch):
			b.mu.Unlock()
			return objstore.ObjectInfo{}, &objstore.Error{Op: "put", Bucket: b.cfg.Bucket, Key: key, Err: objstore.ErrPrecondition}
		}
		// an ETag names a content, as S3's does; If-Match on a rewrite of
		// the same bytes matches both (the store never relies on that)
		b.objs[key] = &object{data: data, lm: b.ServerTime(), etag: etag}
		b.mu.Unlock()
	}
	if err := objstore.CheckPutETag(b.cfg, key, etag, sum); err != nil {
		return objstore.ObjectInfo{}, err
	}
	return objstore.ObjectInfo{Key: key, Size: int64(len(data)), LastModified: b.ServerTime(), ETag: etag}, nil
}

// PutReader implements objstore.Objects.
func (b *Bucket) PutReader(ctx context.Context, key string, cond objstore.Cond, r io.ReaderAt, size int64) (objstore.ObjectInfo, error) {
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
		return objstore.ObjectInfo{}, &objstore.Error{Op: "put", Bucket: b.cfg.Bucket, Key: key, Err: err}
	}
	return b.Put(ctx, key, cond, data)
}

// Head implements objstore.Objects.
func (b *Bucket) Head(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	c := &Call{Op: OpHead, Key: key}
	if err := b.call(ctx, c); err != nil {
		return objstore.ObjectInfo{}, err
	}
	b.mu.Lock()
	o := b.objs[key]
	b.mu.Unlock()
	if o == nil && c.Lie == LiePhantom {
		info := c.Info
		info.Key = key
		if info.Size == 0 {
			info.Size = 1
		}
		if info.LastModified.IsZero() {
			info.LastModified = b.ServerTime()
		}
		return info, nil
	}
	if o == nil {
		return objstore.ObjectInfo{}, b.notExist(OpHead, key)
	}
	return b.info(key, o), nil
}

// Touch implements objstore.Objects.
func (b *Bucket) Touch(ctx context.Context, key string) (objstore.ObjectInfo, error) {
	c := &Call{Op: OpTouch, Key: key}
	sent := b.ServerTime()
	if err := b.call(ctx, c); err != nil {
		return objstore.ObjectInfo{}, err
	}
	b.mu.Lock()
	o := b.objs[key]
	if o == nil {
		b.mu.Unlock()
		return objstore.ObjectInfo{}, b.notExist(OpTouch, key)
	}
	lm := c.Info.LastModified
	if c.Lie != LieNoop {
		// a new object: readers hold objects unlocked, never changed
		o = &object{data: o.data, lm: b.ServerTime(), etag: o.etag}
		b.objs[key] = o
		lm = o.lm
	} else if lm.IsZero() {
		lm = o.lm // what a copy that was not made would say
	}
	etag := o.etag
	b.mu.Unlock()
	if err := objstore.CheckTouch(b.cfg, key, lm, sent); err != nil {
		return objstore.ObjectInfo{}, err
	}
	return objstore.ObjectInfo{Key: key, Size: -1, LastModified: lm, ETag: etag}, nil
}

// Delete implements objstore.Objects.
func (b *Bucket) Delete(ctx context.Context, keys ...string) error {
	for _, k := range keys {
		c := &Call{Op: OpDelete, Key: k}
		if err := b.call(ctx, c); err != nil {
			return err
		}
		if c.Lie == LieNoop {
			continue
		}
		b.mu.Lock()
		delete(b.objs, k)
		b.mu.Unlock()
	}
	return nil
}

// List implements objstore.Objects: the keys under prefix after
// startAfter in order, each as it is when the listing reaches it.
func (b *Bucket) List(ctx context.Context, prefix, startAfter string) iter.Seq2[objstore.ObjectInfo, error] {
	return func(yield func(objstore.ObjectInfo, error) bool) {
		if err := b.call(ctx, &Call{Op: OpList, Key: prefix}); err != nil {
			yield(objstore.ObjectInfo{}, err)
			return
		}
		after := startAfter
		for {
			info, ok := b.next(prefix, after)
			if !ok {
				return
			}
			after = info.Key
			c := &Call{Op: OpListKey, Key: info.Key}
			if err := b.call(ctx, c); err != nil {
				yield(objstore.ObjectInfo{}, err)
				return
			}
			n := 1
			switch c.Lie {
			case LieOmit:
				n = 0
			case LieRepeat:
				n = 2
			}
			for range n {
				if !yield(info, nil) {
					return
				}
			}
		}
	}
}

// next is the first object under prefix after key after.
func (b *Bucket) next(prefix, after string) (objstore.ObjectInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var best string
	for k := range b.objs {
		if strings.HasPrefix(k, prefix) && k > after && (best == "" || k < best) {
			best = k
		}
	}
	if best == "" {
		return objstore.ObjectInfo{}, false
	}
	return b.info(best, b.objs[best]), true
}

// ListDirs implements objstore.Objects.
func (b *Bucket) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	if err := b.call(ctx, &Call{Op: OpList, Key: prefix}); err != nil {
		return nil, err
	}
	var dirs []string
	for _, k := range b.Keys(prefix) {
		if i := strings.IndexByte(k[len(prefix):], '/'); i >= 0 {
			dirs = append(dirs, k[:len(prefix)+i+1])
		}
	}
	return slices.Compact(dirs), nil
}
