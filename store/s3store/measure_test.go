package s3store_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/store"
	"github.com/cairnfs/cairn/store/filearchive"
	"github.com/cairnfs/cairn/store/objstore"
	"github.com/cairnfs/cairn/store/s3store"
	"github.com/cairnfs/cairn/store/storetest"
	"golang.org/x/sync/errgroup"
)

// The measurements behind the README's object-storage requests (not run
// by default: CAIRN_MEASURE_S3=1). They log request counts by class, as
// MinIO is sent them (a counting transport), and the rate of the GC's
// chunk listing; on a loaded machine the times move, the counts do not.

// countingTransport counts requests by class: method, chunk or meta
// key, conditional or not, copy or not.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[string]int
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	what := "meta"
	if strings.Contains(r.URL.Path, "/.chunks/") {
		what = "chunk"
	}
	op := r.Method
	switch {
	case r.URL.Query().Get("list-type") != "":
		op = "LIST"
	case r.Header.Get("X-Amz-Copy-Source") != "":
		op = "COPY"
	case r.Header.Get("If-None-Match") != "":
		op += "-if-absent"
	}
	c.mu.Lock()
	c.n[op+" "+what]++
	c.mu.Unlock()
	return c.base.RoundTrip(r)
}

func (c *countingTransport) take() storetest.RequestCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return storetest.RequestCounts(n)
}

func measuring(t *testing.T) {
	if os.Getenv("CAIRN_MEASURE_S3") == "" {
		t.Skip("a measurement: CAIRN_MEASURE_S3=1 runs it")
	}
}

// TestMeasureBackupRequests: the requests of backups into MinIO through
// a proxy adding CAIRN_MEASURE_DELAY (default 20ms) per request.
func TestMeasureBackupRequests(t *testing.T) {
	measuring(t)
	delay := measureDelay()
	s, ct := measureStore(t, delay)
	const chunks = 256
	img := storetest.Image{Data: storetest.RandBytes("measure", chunks<<16), ChunkSize: 1 << 16}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ct.take()
	for _, step := range []struct {
		name string
		g    string
		at   time.Time
	}{{"new data", "1", at}, {"stored data, another group", "2", at}, {"stored data, same group", "2", at.Add(time.Hour)}} {
		start := time.Now()
		storetest.BackupImage(t, s, store.Group{Type: store.TypeVM, ID: step.g}, step.at, img)
		n := ct.take()
		t.Logf("%s (%v delay): %s; %.1f s", step.name, delay, n.PerChunk(chunks), time.Since(start).Seconds())
	}
}

// measureDelay is CAIRN_MEASURE_DELAY, by default 20ms.
func measureDelay() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CAIRN_MEASURE_DELAY")); err == nil {
		return d
	}
	return 20 * time.Millisecond
}

// measureStore is a new store on a fresh MinIO bucket reached through a
// proxy adding delay per request, with the transport that counts its
// requests; closed when the test ends.
func measureStore(t *testing.T, delay time.Duration) (*store.Store, *countingTransport) {
	t.Helper()
	srv := miniotest.Start(t)
	p := miniotest.NewProxy(t, srv.Endpoint, delay)
	ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone(), n: map[string]int{}}
	cfg := srv.ProxyConfig(p, srv.NewBucket(t))
	b, err := objstore.Open(context.Background(), cfg, srv.Credentials(), objstore.Options{Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	s, err := s3store.CreateOn(context.Background(), filepath.Join(t.TempDir(), "store"), s3store.Config{Config: cfg}, b, store.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ct
}

// TestMeasureTreeBackupRequests: the requests of a second backup of a
// copy of CAIRN_MEASURE_TREE (default: Go's source tree, $(go env
// GOROOT)/src) into MinIO through a proxy adding CAIRN_MEASURE_DELAY
// (default 20ms) per request, every 100th of its files (in sorted order)
// touched in between, as the README's object-storage benchmark does.
func TestMeasureTreeBackupRequests(t *testing.T) {
	measuring(t)
	delay := measureDelay()
	tree := os.Getenv("CAIRN_MEASURE_TREE")
	if tree == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			t.Fatalf("go env GOROOT: %v", err)
		}
		tree = filepath.Join(strings.TrimSpace(string(out)), "src")
	}
	src := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("cp", "-a", tree, src).CombinedOutput(); err != nil {
		t.Fatalf("copy %s: %v: %s", tree, err, out)
	}
	copied := time.Now()
	s, ct := measureStore(t, delay)
	// A file's stat is trusted once its ctime is 2 s older than the
	// backup (filearchive's racy margin): the copy must be that old, or
	// the second backup reads it all again. What is waited for is time.
	time.Sleep(time.Until(copied.Add(3 * time.Second)))
	at := time.Now().Add(-time.Hour)
	for i, step := range []string{"first backup", "second backup, 1% of files touched"} {
		if i == 1 {
			touchEvery(t, src, 100)
		}
		ct.take()
		start := time.Now()
		res := backupTree(t, s, src, at.Add(time.Duration(i)*time.Minute))
		n := ct.take()
		t.Logf("%s (%v delay): %d requests: %v; %d files read, %d reused; %.1f s", step, delay, storetest.RequestCounts(n).Total(""),
			n, res.ReadFiles, res.ReusedFiles, time.Since(start).Seconds())
	}
}

// touchEvery gives every nth regular file under root (sorted by path) a
// new mtime.
func touchEvery(t *testing.T, root string, nth int) {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	now := time.Now()
	for i := nth - 1; i < len(files); i += nth {
		if err := os.Chtimes(files[i], now, now); err != nil {
			t.Fatal(err)
		}
	}
}

// backupTree backs up the tree at src as root.pxar of host/tree at at.
func backupTree(t *testing.T, s *store.Store, src string, at time.Time) filearchive.Result {
	t.Helper()
	ctx := context.Background()
	b, err := s.StartBackup(ctx, store.Group{Type: store.TypeHost, ID: "tree"}, at)
	if err != nil {
		t.Fatal(err)
	}
	b.Sync = store.SyncNone
	res, err := filearchive.AddArchive(ctx, b, "root.pxar", src, filearchive.Options{})
	if err != nil {
		b.Abort()
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMeasureChunkListing: the chunks listed a second by one listing of
// .chunks/ and by the GC's parallel one, on CAIRN_MEASURE_CHUNKS
// objects (default 100,000), on MinIO directly and through a proxy
// adding 20 ms per request.
func TestMeasureChunkListing(t *testing.T) {
	measuring(t)
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("CAIRN_MEASURE_CHUNKS")); err == nil {
		n = v
	}
	srv := miniotest.Start(t)
	bucket := srv.NewBucket(t)
	direct, err := objstore.Open(context.Background(), srv.Config(bucket), srv.Credentials(), objstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fill(t, direct, n)
	for _, delay := range []time.Duration{0, 20 * time.Millisecond} {
		p := miniotest.NewProxy(t, srv.Endpoint, delay)
		b, err := objstore.Open(context.Background(), srv.ProxyConfig(p, bucket), srv.Credentials(), objstore.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"one listing", "parallel"} {
			before := p.Requests()
			cpu := serverCPU(t, srv)
			start := time.Now()
			got := 0
			list := b.List(context.Background(), ".chunks/", "")
			if how == "parallel" {
				list = s3store.ListChunkObjects(context.Background(), b)
			}
			for _, err := range list {
				if err != nil {
					t.Fatal(err)
				}
				got++
			}
			d := time.Since(start)
			if got != n {
				t.Fatalf("%s listed %d of %d", how, got, n)
			}
			t.Logf("%s, %v delay: %d chunks in %.2f s, %.0f chunks/s, %d requests, MinIO %.2f CPU-s", how, delay, n, d.Seconds(), float64(n)/d.Seconds(),
				p.Requests()-before, serverCPU(t, srv)-cpu)
		}
	}
}

// fill puts n one-byte objects at chunk keys.
func fill(t *testing.T, b objstore.Objects, n int) {
	t.Helper()
	var g errgroup.Group
	g.SetLimit(64)
	for i := range n {
		g.Go(func() error {
			d := fmt.Sprintf("%064x", uint64(i)*0x9e3779b97f4a7c15)
			d = d[48:] + d[:48] // spread over the prefixes
			_, err := b.Put(context.Background(), ".chunks/"+d[:4]+"/"+d, objstore.Cond{}, []byte{1})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// serverCPU is the CPU seconds the MinIO process serving srv has used
// (utime + stime of the process whose command line names its address).
func serverCPU(t *testing.T, srv *miniotest.Server) float64 {
	t.Helper()
	addr := strings.TrimPrefix(srv.Endpoint, "http://")
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, c := range procs {
		cmd, err := os.ReadFile(c)
		args := strings.Split(string(cmd), "\x00")
		if err != nil || len(args) < 2 || args[1] != "server" || !slices.Contains(args, addr) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(c), "stat"))
		if err != nil {
			continue
		}
		// the fields after the command's name, which is in parentheses
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		utime, _ := strconv.ParseFloat(f[11], 64)
		stime, _ := strconv.ParseFloat(f[12], 64)
		return (utime + stime) / 100 // clock ticks (USER_HZ 100)
	}
	t.Fatalf("no MinIO process serving %s", addr)
	return 0
}
