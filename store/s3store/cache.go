package s3store

import (
	"cmp"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/internal/fsutil"
	"golang.org/x/sys/unix"
)

// A remote store keeps the chunks it read from the bucket in a bounded
// on-disk cache, in front of the bucket and behind the in-memory Cache:
// <root>/.chunk-cache/XXXX/<digest>, one blob per file, as in a local
// store. A hit refreshes the file's atime; when the files add up to more
// than the bound, a trim removes the least recently used (oldest atime)
// until they fill 90% of it. The bytes added since the last trim are
// counted in memory, so a trim (a scan of the cache) runs once per 10% of
// the bound written, never per read. Several processes may share the
// cache: files are written under a temporary name and renamed, and each
// process's trim judges the files it finds.

// chunkCacheDir is the on-disk chunk cache's directory in a remote
// store's root.
const chunkCacheDir = ".chunk-cache"

// DefaultChunkCacheSize bounds the on-disk chunk cache of a remote store
// whose configuration says nothing (Config.CacheSize 0).
const DefaultChunkCacheSize = 1 << 30

// staleTemp is how old a temporary file in the cache must be for a trim
// to take it for one a killed process left.
const staleTemp = time.Hour

// diskCache is the on-disk chunk cache.
type diskCache struct {
	dir   string
	limit int64
	off   bool // the directory is not one (a symbolic link): no cache

	size     atomic.Int64 // bytes at the last trim plus bytes added since
	scanned  atomic.Bool  // a trim has measured the cache
	trimming atomic.Bool
	wg       sync.WaitGroup
	log      *slog.Logger // the bucket's
}

func newDiskCache(root string, limit int64, log *slog.Logger) *diskCache {
	if limit <= 0 {
		limit = DefaultChunkCacheSize
	}
	c := &diskCache{dir: filepath.Join(root, chunkCacheDir), limit: limit, log: log}
	if fi, err := os.Lstat(c.dir); err == nil && !fi.IsDir() {
		// never written through: it could lead out of the store
		c.log.Warn("chunk cache: not a directory, chunks are not cached", "path", c.dir, "type", fi.Mode().Type().String())
		c.off = true
	}
	return c
}

func (c *diskCache) path(d chunk.Digest) string {
	h := d.String()
	return c.dir + "/" + h[:4] + "/" + h
}

// read returns chunk d from the cache when a good copy is there: a file
// whose blob fails its CRC is removed and counts as a miss.
func (c *diskCache) read(d chunk.Digest, opt store.ChunkOptions) (store.Blob, bool) {
	if c.off {
		return store.BufBlob(d, opt.Buf[:0]), false
	}
	path := c.path(d)
	opt.Direct = store.DirectNever
	b, err := store.ReadChunkFile(d, path, opt)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("chunk cache: unreadable copy removed", "chunk", d.String(), "err", err)
			os.Remove(path)
		}
		return b, false
	}
	if err := b.Do(func(blob []byte) error { _, err := chunk.CheckCRC(blob); return err }); err != nil {
		b.Release()
		c.log.Warn("chunk cache: damaged copy removed", "chunk", d.String(), "err", err)
		os.Remove(path)
		return store.BufBlob(d, opt.Buf[:0]), false
	}
	fsutil.TouchNoFollow(path) // least recently used goes first
	return b, true
}

// add stores blob as chunk d. A failure only costs a later read from
// the bucket: it is logged.
func (c *diskCache) add(d chunk.Digest, blob []byte) {
	if c.off {
		return
	}
	path := c.path(d)
	tmp, err := os.CreateTemp(filepath.Dir(path), d.String()+".tmp_")
	if errors.Is(err, fs.ErrNotExist) {
		if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
			tmp, err = os.CreateTemp(filepath.Dir(path), d.String()+".tmp_")
		}
	}
	if err != nil {
		c.log.Warn("chunk cache: cannot add a chunk", "chunk", d.String(), "err", err)
		return
	}
	_, err = tmp.Write(blob)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		c.log.Warn("chunk cache: cannot add a chunk", "chunk", d.String(), "err", err)
		return
	}
	if c.size.Add(int64(len(blob))) > c.limit || !c.scanned.Load() {
		c.startTrim()
	}
}

// startTrim runs a trim in the background unless one is running.
func (c *diskCache) startTrim() {
	if !c.trimming.CompareAndSwap(false, true) {
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.trimming.Store(false)
		if err := c.trim(); err != nil {
			c.log.Warn("chunk cache: trim failed", "dir", c.dir, "err", err)
		}
	}()
}

// close waits for a trim in flight.
func (c *diskCache) close() { c.wg.Wait() }

// cacheFile is one file of the cache as a trim sees it.
type cacheFile struct {
	path  string
	size  int64
	atime int64
}

// trim measures the cache and, when it holds more than its bound,
// removes the least recently used files until it holds 90% of it.
// Temporary files a killed process left are removed on the way.
func (c *diskCache) trim() error {
	files, total, err := c.scan()
	if err != nil {
		return err
	}
	if total > c.limit {
		slices.SortFunc(files, func(a, b cacheFile) int { return cmp.Compare(a.atime, b.atime) })
		for _, f := range files {
			if total <= c.limit/10*9 {
				break
			}
			if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
				total -= f.size
			}
		}
	}
	c.size.Store(total)
	c.scanned.Store(true)
	return nil
}

// scan lists the cache's chunk files and their total size.
func (c *diskCache) scan() ([]cacheFile, int64, error) {
	prefixes, err := fsutil.ReadNames(c.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	var files []cacheFile
	var total int64
	old := time.Now().Add(-staleTemp).UnixNano()
	for _, p := range prefixes {
		dir := c.dir + "/" + p
		names, err := fsutil.ReadNames(dir)
		if err != nil {
			continue // not a directory, or gone meanwhile
		}
		for _, n := range names {
			var st unix.Stat_t
			path := dir + "/" + n
			if unix.Lstat(path, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
				continue
			}
			if strings.Contains(n, ".tmp_") {
				if st.Mtim.Nano() < old {
					os.Remove(path)
				}
				continue
			}
			files = append(files, cacheFile{path: path, size: st.Size, atime: st.Atim.Nano()})
			total += st.Size
		}
	}
	return files, total, nil
}
