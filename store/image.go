package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/index"
	"golang.org/x/sys/unix"
)

// ImageOptions tune an image backup.
type ImageOptions struct {
	ChunkSize int // power of two, default the store's ImageChunkSize
	Workers   int // hash/compress workers, default NumCPU
	Stats     *UploadStats
}

// DefaultImageChunkSize is the fixed chunk size of an image in a local
// store when the backup gives none (Store.ImageChunkSize; a remote
// store's is RemoteImageChunkSize). An incremental backup stores every
// chunk that holds a changed block, and a file system's changes are
// scattered: with 1% of the files of a 1 GiB ext4 image appended to,
// about 115 blocks of file data and 110 of inode tables change, which
// touch 34 of the 4 MiB chunks (26 MB stored per backup) but only 117 of
// the 256 KiB ones (4.8 MB). PBS's fixed index takes any power of two;
// its client makes 64 KiB to 4 MiB.
const DefaultImageChunkSize = 256 << 10

// ArchiveIndexName maps an archive name as the user gives it to the file
// that holds it: disk.img → disk.img.fidx, root.pxar → root.mpxar.didx
// (the metadata half), x.blob → x.blob.
func ArchiveIndexName(name string) string {
	switch {
	case strings.HasSuffix(name, ".img"):
		return name + ".fidx"
	case strings.HasSuffix(name, ".pxar"):
		return strings.TrimSuffix(name, ".pxar") + ".mpxar.didx"
	}
	return name
}

// AddImage backs up src (a file, block device or stream, such as
// standard input) as the image archive name (NAME.img) in a fixed index.
// A stream is read once, in chunk-sized blocks: its size need not be
// known up front (the index records it at the end) and memory stays
// bounded by the uploader's buffers. Holes (SEEK_HOLE, in a file) and
// all-zero chunks map to the zero chunk without being hashed or
// compressed (in an encrypted backup, to the keyed zero chunk, encrypted
// once). Chunks of the image's reference (Reference: the group's newest
// usable snapshot that has it) are taken as present. Without
// opt.ChunkSize the image takes the reference's chunk size, else the
// store's (ImageChunkSize).
func (b *Backup) AddImage(ctx context.Context, name string, src io.Reader, opt ImageOptions) error {
	if !strings.HasSuffix(name, ".img") {
		return fmt.Errorf("image archive %q: %w: name must end in .img", name, ErrBadName)
	}
	if err := CheckArchiveName(name); err != nil {
		return err
	}
	idxName := name + ".fidx"
	ref, hasRef, err := b.Reference(ctx, name)
	if err != nil {
		return err
	}
	cs := opt.ChunkSize
	if cs == 0 && hasRef {
		cs = b.previousChunkSize(ref, idxName)
	}
	if cs == 0 {
		cs = b.s.ImageChunkSize()
	}
	if err := chunk.CheckChunkSize(cs); err != nil {
		return fmt.Errorf("image %s: %w", name, err)
	}
	w, err := index.NewFixedWriter(filepath.Join(b.dir, idxName), cs)
	if err != nil {
		return err
	}
	var known KnownSet
	if hasRef {
		known = b.knownChunks(ref, idxName)
	}
	if b.key == nil { // an encrypted image's zero chunk is the Uploader's (uploadkey.go)
		if err := b.s.ensureZeroChunk(ctx, cs); err != nil {
			w.Abort()
			return err
		}
		if known == nil {
			known = KnownSet{}
		}
		known[chunk.ZeroDigest(cs)] = struct{}{}
	}
	u := b.NewUploader(ctx, opt.Workers, known, opt.Stats, w.Add)
	rerr := readImage(ctx, src, cs, u)
	if err := u.Close(); rerr == nil {
		rerr = err
	}
	if rerr != nil {
		w.Abort()
		return fmt.Errorf("image %s from %s: %w", name, sourceName(src), rerr)
	}
	csum, size, err := w.Close()
	if err != nil {
		return err
	}
	return b.AddFile(FileInfo{Filename: idxName, Size: uint64(size), Csum: CsumHex(csum)})
}

// previousChunkSize is the chunk size of index idxName of the image's
// reference prev, 0 when unreadable: an image keeps its chunk size from
// backup to backup unless one is given (chunks of another size are all
// new), so a change of the default does not store every image again.
func (b *Backup) previousChunkSize(prev Snapshot, idxName string) int {
	x, err := b.s.OpenIndexFile(prev, idxName)
	if err != nil {
		return 0
	}
	defer x.Close()
	f, ok := x.(*index.Fixed)
	if !ok || chunk.CheckChunkSize(int(f.ChunkSize())) != nil {
		return 0
	}
	return int(f.ChunkSize())
}

// knownChunks loads the digests of index idxName of the image's
// reference prev; an unreadable one gives an empty set.
func (b *Backup) knownChunks(prev Snapshot, idxName string) KnownSet {
	x, err := b.s.OpenIndexFile(prev, idxName)
	if err != nil {
		return nil
	}
	defer x.Close()
	set := make(KnownSet, x.Len())
	for i := 0; i < x.Len(); i++ {
		d, _, _ := x.Chunk(i)
		set[d] = struct{}{}
	}
	return set
}

// sourceName names an image source in errors.
func sourceName(src io.Reader) string {
	if f, ok := src.(*os.File); ok {
		return f.Name()
	}
	return "a stream"
}

// readImage reads src in chunk-sized blocks and submits them. Where the
// file system reports holes, whole-hole chunks are submitted as zero
// without being read.
func readImage(ctx context.Context, src io.Reader, cs int, u *Uploader) error {
	holes := newHoleFinder(src)
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if holes.isHole(off, int64(cs)) {
			buf := u.Buffer(cs)
			if err := u.Submit(buf, true); err != nil {
				return err
			}
			off += int64(cs)
			continue
		}
		holes.readAhead(off, (1+imageReadAhead)*int64(cs))
		buf := u.Buffer(cs)
		n, err := readFullAt(src, buf, off, holes.seekable)
		if n > 0 {
			if serr := u.Submit(buf[:n], false); serr != nil {
				return serr
			}
			off += int64(n)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read at offset %d: %w", off, err)
		}
	}
}

// readFullAt fills buf from off (pread) or from the stream, returning
// io.EOF once the source is exhausted (possibly with n > 0).
func readFullAt(f io.Reader, buf []byte, off int64, seekable bool) (int, error) {
	var n int
	for n < len(buf) {
		var m int
		var err error
		if seekable {
			m, err = f.(io.ReaderAt).ReadAt(buf[n:], off+int64(n))
		} else {
			m, err = f.Read(buf[n:])
		}
		n += m
		if errors.Is(err, io.EOF) || (err == nil && m == 0) {
			return n, io.EOF
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// holeFinder answers "is [off, off+n) a hole?" with SEEK_DATA, caching
// the next data offset so that each hole costs one system call.
type holeFinder struct {
	f        *os.File
	seekable bool
	sparse   bool
	size     int64
	nextData int64 // first data byte at or after lastOff; -1 unknown
	lastOff  int64
	advised  int64 // read ahead up to here
}

func newHoleFinder(src io.Reader) *holeFinder {
	h := &holeFinder{nextData: -1}
	f, ok := src.(*os.File)
	if !ok {
		return h // a stream: read in order, no holes
	}
	h.f = f
	fi, err := f.Stat()
	if err != nil {
		return h
	}
	h.seekable = fi.Mode().IsRegular() || fi.Mode()&os.ModeDevice != 0
	if fi.Mode().IsRegular() {
		h.size = fi.Size()
		h.sparse = true
	}
	return h
}

// imageReadAhead is how many chunks ahead of the one being read a file's
// data is asked for (posix_fadvise WILLNEED): the disk works while the
// reader waits for room in the Uploader, and the reader finds its data
// in the page cache. Holes cost the kernel nothing to read ahead.
const imageReadAhead = 2

// readAhead asks the kernel to start reading [off, off+n) of a file,
// each range once: the reader asks for its chunks in increasing order.
func (h *holeFinder) readAhead(off, n int64) {
	if h.f == nil || !h.sparse || off >= h.size {
		return
	}
	from := max(off, h.advised)
	if end := min(off+n, h.size); from < end {
		_ = unix.Fadvise(int(h.f.Fd()), from, end-from, unix.FADV_WILLNEED)
		h.advised = end
	}
}

func (h *holeFinder) isHole(off, n int64) bool {
	if !h.sparse || off+n > h.size {
		return false
	}
	if h.nextData < 0 || off < h.lastOff || off > h.nextData {
		d, err := unix.Seek(int(h.f.Fd()), off, unix.SEEK_DATA)
		switch {
		case errors.Is(err, unix.ENXIO):
			d = h.size // no data after off
		case err != nil:
			h.sparse = false // the file system cannot tell
			return false
		}
		h.nextData, h.lastOff = d, off
	}
	return h.nextData >= off+n
}

// ensureZeroChunk stores the all-zero chunk of size cs once, as PBS
// registers one per image, so zero blocks never need a lookup. One that
// is there is kept for the writer as a reused chunk is (it need not be
// in the base snapshot, and the image's known set takes it as present).
func (s *Store) ensureZeroChunk(ctx context.Context, cs int) error {
	d := chunk.ZeroDigest(cs)
	if s.lookFirst() { // else the insert's conditional create looks
		ok, err := s.ReuseChunkContext(ctx, nil, nil, d)
		if ok || err != nil {
			return err
		}
	}
	blob, err := chunk.EncodeBlob(nil, make([]byte, cs), true)
	if err != nil {
		return err
	}
	_, err = s.insertChunk(ctx, d, blob, nil)
	return err
}
