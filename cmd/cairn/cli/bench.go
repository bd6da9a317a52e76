package cli

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/internal/progress"
	"github.com/spf13/cobra"
)

func (a *app) benchCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bench", Short: "measure parts of cairn on this machine",
		Long: `Measures parts of cairn on this machine, apart from the store: the
chunkers. test/bench in the source tree measures whole commands.`}
	cmd.AddCommand(a.benchChunkerCmd())
	return cmd
}

type benchChunkerOpts struct {
	fixed, dynamic, buffer string
	print                  bool
}

func (a *app) benchChunkerCmd() *cobra.Command {
	var o benchChunkerOpts
	cmd := &cobra.Command{
		Use:   "chunker [--fixed SIZE | --dynamic AVG] [--buffer-size SIZE] [--print] FILE",
		Short: "chunk a file and report MB/s, chunk count and average size",
		Long: `Chunks FILE as a backup would, with fixed chunks of --fixed SIZE (as an
image) or buzhash content-defined chunks of average --dynamic AVG (as a
file archive; the default), reading --buffer-size at a time, and reports
the throughput, the chunk count and the average chunk size. Nothing is
stored. --print gives one line a chunk: offset, length and SHA-256.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.benchChunker(o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.fixed, "fixed", "", "fixed chunk size (power of two, 64K to 16M)")
	f.StringVar(&o.dynamic, "dynamic", "", "buzhash average chunk size (default 4M)")
	f.StringVar(&o.buffer, "buffer-size", "4M", "input read size (8k to 16M)")
	f.BoolVar(&o.print, "print", false, "print one line per chunk: offset length sha256-hex")
	return cmd
}

func (o benchChunkerOpts) chunker() (chunk.Chunker, string, error) {
	if o.fixed != "" && o.dynamic != "" {
		return nil, "", usageErr("give --fixed or --dynamic, not both")
	}
	if o.fixed != "" {
		n, err := parseSize(o.fixed)
		if err != nil {
			return nil, "", usageErr("--fixed: %v", err)
		}
		c, err := chunk.NewFixed(int(n))
		if err != nil {
			return nil, "", usageErr("--fixed: %v", err)
		}
		return c, "fixed " + o.fixed, nil
	}
	avg := o.dynamic
	if avg == "" {
		avg = "4M"
	}
	n, err := parseSize(avg)
	if err != nil {
		return nil, "", usageErr("--dynamic: %v", err)
	}
	c, err := chunk.NewBuzhash(int(n))
	if err != nil {
		return nil, "", usageErr("--dynamic: %v", err)
	}
	return c, "buzhash avg " + avg, nil
}

func (a *app) benchChunker(o benchChunkerOpts, path string) error {
	c, what, err := o.chunker()
	if err != nil {
		return err
	}
	bufSize, err := parseSize(o.buffer)
	if err != nil || bufSize < 1 || bufSize > 16<<20 {
		return usageErr("--buffer-size %q: want 1 byte to 16M", o.buffer)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	out := bufio.NewWriterSize(a.stdout, 64<<10)
	defer out.Flush()
	start := time.Now()
	total, count, err := chunk.NewReader(f, c, int(bufSize)).Each(func(off int64, b []byte) error {
		if o.print {
			d := chunk.Sum(b)
			fmt.Fprintf(out, "%d %d %s\n", off, len(b), hex.EncodeToString(d[:]))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	el := time.Since(start)
	avg := int64(0)
	if count > 0 {
		avg = total / count
	}
	fmt.Fprintf(out, "%s, buffer %s: %d bytes in %d chunks (average %d) in %s: %.1f MB/s\n",
		what, o.buffer, total, count, avg, el.Round(time.Microsecond), progress.MBps(total, el))
	return nil
}
