package backupsum

import (
	"fmt"
	"io"
	"time"

	"github.com/cairnfs/cairn/internal/progress"
	"github.com/cairnfs/cairn/store"
	"github.com/dustin/go-humanize"
)

// Summary is what `cairn backup` reports: as text (WriteText) or JSON.
type Summary struct {
	Snapshot      string  `json:"snapshot"`
	Bytes         int64   `json:"bytes"`
	ReadBytes     int64   `json:"read_bytes"`
	ZeroBytes     int64   `json:"zero_bytes"`
	NewBytes      int64   `json:"new_bytes"`
	NewStored     int64   `json:"new_stored_bytes"`
	DedupBytes    int64   `json:"dedup_bytes"`
	NewChunks     int64   `json:"new_chunks"`
	Chunks        int64   `json:"chunks"`
	DedupRatio    float64 `json:"dedup_ratio"`
	CompressRatio float64 `json:"compress_ratio"`
	Seconds       float64 `json:"seconds"`
	MBps          float64 `json:"mb_per_s"`
	// File archives (NAME.pxar), totals and one entry each.
	Files       int64         `json:"files,omitempty"`
	Dirs        int64         `json:"dirs,omitempty"`
	ReusedBytes int64         `json:"reused_bytes,omitempty"`
	Errors      int64         `json:"errors"`
	FileArchive []FileArchive `json:"file_archives,omitempty"`
	// Blobs (NAME.blob): how many, and their bytes (in read_bytes too).
	Blobs     int64 `json:"blobs,omitempty"`
	BlobBytes int64 `json:"blob_bytes,omitempty"`
	// Images, one entry each: the snapshot whose index was the image's
	// reference (known chunks, chunk size), if any.
	Images []Image `json:"images,omitempty"`
	// KeyFingerprint is the key an encrypted backup used (absent: plain).
	KeyFingerprint string `json:"key_fingerprint,omitempty"`
	// DryRun: nothing was written; the counts are what a backup would do.
	DryRun bool `json:"dry_run,omitempty"`
}

// FileArchive is what one file archive (NAME.pxar) of a backup did.
type FileArchive struct {
	Archive      string `json:"archive"`
	Mode         string `json:"mode"`
	Previous     string `json:"previous,omitempty"`
	Files        int64  `json:"files"`
	Dirs         int64  `json:"dirs"`
	Symlinks     int64  `json:"symlinks"`
	Hardlinks    int64  `json:"hardlinks"`
	Others       int64  `json:"others"`
	Excluded     int64  `json:"excluded"`
	Bytes        int64  `json:"bytes"`
	ReadFiles    int64  `json:"read_files"`
	ReadBytes    int64  `json:"read_bytes"`
	ReusedFiles  int64  `json:"reused_files"`
	ReusedBytes  int64  `json:"reused_bytes"`
	PaddingBytes int64  `json:"padding_bytes"`
	// RetiredChunks of the previous payload were not reused (the padding
	// bound); their files (RetiredBytes) were read again.
	RetiredChunks int   `json:"retired_chunks"`
	RetiredBytes  int64 `json:"retired_bytes"`
	MetaSize      int64 `json:"metadata_size"`
	PayloadSize   int64 `json:"payload_size"`
	Errors        int64 `json:"errors"`
}

// Image is what the summary says of one image of a backup.
type Image struct {
	Archive  string `json:"archive"`
	Previous string `json:"previous,omitempty"` // the reference snapshot
}

// New totals the uploads of images (img) and file archives
// (px); MB/s counts image bytes and file contents, reused ones included.
// Deduplication (bytes / new bytes) and compression (new bytes / their
// size on disk) are apart; ratios are 0 when nothing was new.
func New(snap store.Snapshot, img, px store.UploadTotals, pxars []FileArchive, el time.Duration) Summary {
	t := img
	t.Add(px)
	sum := Summary{Snapshot: snap.String(), Bytes: t.Bytes, ReadBytes: img.Bytes, ZeroBytes: t.ZeroBytes,
		NewBytes: t.NewBytes, NewStored: t.NewStored, DedupBytes: t.Bytes - t.NewBytes, NewChunks: t.NewChunks,
		Chunks: t.Chunks, Seconds: el.Seconds(), FileArchive: pxars}
	content := img.Bytes
	for _, p := range pxars {
		sum.Files += p.Files
		sum.Dirs += p.Dirs
		sum.ReusedBytes += p.ReusedBytes
		sum.ReadBytes += p.ReadBytes
		sum.Errors += p.Errors
		content += p.Bytes
	}
	sum.MBps = progress.MBps(content, el)
	if t.NewBytes > 0 {
		sum.DedupRatio = float64(t.Bytes) / float64(t.NewBytes)
	}
	if t.NewStored > 0 {
		sum.CompressRatio = float64(t.NewBytes) / float64(t.NewStored)
	}
	return sum
}

// WriteText writes the summary as cairn backup prints it.
func (sum Summary) WriteText(w io.Writer) {
	ib := func(n int64) string { return humanize.IBytes(uint64(n)) }
	if sum.DryRun {
		fmt.Fprintf(w, "dry run of snapshot %s: nothing written, what a backup would do:\n", sum.Snapshot)
	} else {
		fmt.Fprintf(w, "snapshot %s\n", sum.Snapshot)
	}
	fmt.Fprintf(w, "  read      %s from the sources\n", ib(sum.ReadBytes))
	if sum.ReusedBytes > 0 {
		fmt.Fprintf(w, "  reused    %s of file contents not read again (unchanged since the previous snapshot)\n", ib(sum.ReusedBytes))
	}
	if sum.Blobs > 0 {
		fmt.Fprintf(w, "  blobs     %d, %s (each one file of the snapshot, no chunks)\n", sum.Blobs, ib(sum.BlobBytes))
	}
	if sum.Chunks > 0 || sum.Blobs == 0 {
		fmt.Fprintf(w, "  chunks    %s in %d chunks: %s new in %d, %s already stored (%s zero)\n", ib(sum.Bytes), sum.Chunks,
			ib(sum.NewBytes), sum.NewChunks, ib(sum.DedupBytes), ib(sum.ZeroBytes))
	}
	fmt.Fprintf(w, "  stored    %s (the new chunks, compressed)\n", ib(sum.NewStored))
	fmt.Fprintf(w, "  dedup     %s\n  compress  %s\n", ratio(sum.DedupRatio), ratio(sum.CompressRatio))
	for _, im := range sum.Images {
		im.writeText(w)
	}
	for _, p := range sum.FileArchive {
		p.writeText(w)
	}
	if sum.KeyFingerprint != "" {
		fmt.Fprintf(w, "  encrypted with key %s\n", sum.KeyFingerprint)
	}
	el := time.Duration(sum.Seconds * float64(time.Second))
	fmt.Fprintf(w, "  time      %s, %.1f MB/s\n", el.Round(time.Millisecond), sum.MBps)
}

// ratio formats a deduplication or compression ratio; 0 means nothing
// was new.
func ratio(r float64) string {
	if r <= 0 {
		return "- (nothing new)"
	}
	return fmt.Sprintf("%.2fx", r)
}
