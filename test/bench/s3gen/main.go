// Command s3gen fills the bucket of a remote store (made by `cairn init
// --s3`) with many snapshots and chunks for the object-storage scale
// benchmark (test/bench/s3-scale.sh), without backing anything up: it
// writes the objects a backup would, straight into the bucket, as fast
// as the server takes them.
//
//   - Chunks: -chunks tiny chunks, valid DataBlobs (uncompressed, CRC)
//     of 16 bytes of data each ("s3gen" and the chunk's number), so each
//     has its own digest, at .chunks/XXXX/<digest>, -jobs PUTs in flight.
//     Every tenth (number%10 == 9) is garbage: no snapshot refers to it,
//     and a GC with --atime-cutoff 0 sweeps it (-garbage puts them again).
//   - Snapshots: -groups groups host/gNNN of -per snapshots each, a day
//     apart from 2020-01-01, each one archive root.pxar.didx (a valid
//     pxar: a directory holding the file "data") and its manifest, put
//     last. The referenced chunks are dealt out to the groups in equal
//     runs; snapshot j of a group refers to -refs consecutive chunks of
//     its group's run, each snapshot sliding the window along by
//     (run - refs)/(per - 1): like incremental backups, each shares most
//     of its chunks with the one before and adds a few, and the group's
//     snapshots cover its run. The file's content is its chunks' data in
//     order, between two chunks holding the pxar stream's head and tail
//     (the same for every snapshot), so the mount reads it as any pxar.
//
// Chunk objects are deterministic: a later run with more -chunks puts
// only the new ones (from -from, as the script keeps count) and the
// snapshots again (their indexes change with the layout).
//
//	s3gen -store DIR -chunks 1000000 -groups 100 -per 100 -refs 1000 -jobs 64
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
)

// layout is what the generator makes.
type layout struct {
	chunks, from  int // chunk numbers [0, chunks); put from from on
	groups, per   int
	refs          int
	jobs          int
	garbage, snap bool // put the garbage chunks again; put the snapshots
}

func main() {
	var l layout
	dir := flag.String("store", "", "the remote store's directory (its remote.json names the bucket)")
	flag.IntVar(&l.chunks, "chunks", 100000, "chunks in the bucket")
	flag.IntVar(&l.from, "from", 0, "chunks below this number are in the bucket already")
	flag.IntVar(&l.groups, "groups", 100, "backup groups")
	flag.IntVar(&l.per, "per", 100, "snapshots per group")
	flag.IntVar(&l.refs, "refs", 0, "chunks each snapshot refers to (0: 10 references per chunk on average)")
	flag.IntVar(&l.jobs, "jobs", 64, "requests in flight")
	flag.BoolVar(&l.garbage, "garbage", false, "only put the garbage chunks again (after a GC swept them)")
	flag.BoolVar(&l.snap, "snapshots", true, "put the snapshots")
	flag.Parse()
	if err := run(*dir, l); err != nil {
		fmt.Fprintln(os.Stderr, "s3gen:", err)
		os.Exit(1)
	}
}

func run(dir string, l layout) error {
	if dir == "" || l.chunks < 10 || l.groups < 1 || l.per < 2 || l.jobs < 1 || l.from < 0 {
		return fmt.Errorf("need -store, -chunks >= 10, -groups >= 1, -per >= 2, -jobs >= 1, -from >= 0")
	}
	run := l.referenced() / l.groups
	if l.refs == 0 {
		l.refs = max(1, 10*l.referenced()/(l.groups*l.per))
	}
	l.refs = min(l.refs, run)
	if run < 1 || (run-l.refs) > l.refs*(l.per-1) {
		return fmt.Errorf("%d chunks in runs of %d per group: -refs %d with -per %d do not cover a run", l.chunks, run, l.refs, l.per)
	}
	b, err := openBucket(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	g := &gen{l: l, b: b, run: run, start: time.Now()}
	if l.garbage {
		return g.putChunks(ctx, func(i int) bool { return garbage(i) })
	}
	if err := g.putChunks(ctx, func(i int) bool { return i >= l.from }); err != nil {
		return err
	}
	if !l.snap {
		return nil
	}
	return g.putSnapshots(ctx)
}

// openBucket opens the bucket dir's remote.json names, with the
// credentials it names (or AWS_* in the environment).
func openBucket(dir string) (objstore.Objects, error) {
	b, err := os.ReadFile(filepath.Join(dir, "remote.json"))
	if err != nil {
		return nil, err
	}
	var cfg s3store.Config
	if err := json.Unmarshal(b, &cfg); err != nil {
		return nil, fmt.Errorf("%s/remote.json: %w", dir, err)
	}
	cred, err := objstore.LoadCredentials(cfg.CredentialsFile)
	if err != nil {
		return nil, err
	}
	return objstore.Open(context.Background(), cfg.Config, cred, objstore.Options{})
}

// gen puts the objects of a layout into a bucket.
type gen struct {
	l     layout
	b     objstore.Objects
	run   int // referenced chunks per group
	start time.Time
	done  atomic.Int64
}

// garbage tells whether chunk i is one no snapshot refers to.
func garbage(i int) bool { return i%10 == 9 }

// referenced is how many chunks snapshots refer to.
func (l layout) referenced() int { return l.chunks - (l.chunks+1)/10 }

// nth is the number of the n-th referenced chunk.
func nth(n int) int { return n/9*10 + n%9 }

// progress prints a line every 10,000 objects.
func (g *gen) progress(what string) {
	if n := g.done.Add(1); n%10000 == 0 {
		s := time.Since(g.start).Seconds()
		fmt.Fprintf(os.Stderr, "s3gen: %d %s in %.0f s (%.0f/s)\n", n, what, s, float64(n)/s)
	}
}
