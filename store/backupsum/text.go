package backupsum

import (
	"fmt"
	"io"

	"github.com/cairnfs/cairn/internal/termsafe"
	"github.com/dustin/go-humanize"
)

func (p FileArchive) writeText(w io.Writer) {
	fmt.Fprintf(w, "  %s (%s", termsafe.Quote(p.Archive), p.Mode)
	if p.Previous != "" {
		fmt.Fprintf(w, ", reference %s", p.Previous)
	}
	fmt.Fprintf(w, ")\n    entries  %d files (%s), %d dirs, %d symlinks, %d hard links, %d others, %d excluded\n",
		p.Files, humanize.IBytes(uint64(p.Bytes)), p.Dirs, p.Symlinks, p.Hardlinks, p.Others, p.Excluded)
	fmt.Fprintf(w, "    read     %d files (%s)\n    reused   %d files (%s, %s padding: reads %.2fx the file data)\n",
		p.ReadFiles, humanize.IBytes(uint64(p.ReadBytes)), p.ReusedFiles, humanize.IBytes(uint64(p.ReusedBytes)),
		humanize.IBytes(uint64(p.PaddingBytes)), 1+float64(p.PaddingBytes)/float64(max(p.Bytes, 1)))
	if p.RetiredChunks > 0 {
		fmt.Fprintf(w, "    retired  %d chunks of the reference (padding bound): %s of their files read again\n",
			p.RetiredChunks, humanize.IBytes(uint64(p.RetiredBytes)))
	}
	fmt.Fprintf(w, "    streams  metadata %s, payload %s\n    errors   %d\n",
		humanize.IBytes(uint64(p.MetaSize)), humanize.IBytes(uint64(p.PayloadSize)), p.Errors)
}

func (im Image) writeText(w io.Writer) {
	if im.Previous == "" {
		fmt.Fprintf(w, "  %s (image, no reference: no earlier snapshot of the group has it)\n", termsafe.Quote(im.Archive))
		return
	}
	fmt.Fprintf(w, "  %s (image, reference %s)\n", termsafe.Quote(im.Archive), im.Previous)
}
