package filearchive

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/cairnfs/cairn/chunk"
	"github.com/cairnfs/cairn/store/pxar"
	"github.com/cairnfs/cairn/store/storetest"
)

// TestRemoteSecondBackupRequests counts the requests of a tree's second
// backup on the in-memory bucket (a request per call, as on S3), 1% of
// its files touched (a new mtime, the same content), as the README's
// object-storage benchmark does to Go's tree. Its payload is the first
// backup's chunks, each touched file found unchanged by its stat table
// record's digest; the chunks it writes are the new ones of its
// metadata and stat table (and the payload stream's markers, cut apart
// from the chunks injected after them), one conditional PUT each; it
// asks the bucket about no chunk of its base (docs/design/store.md,
// rule 2) and reads only the base's metadata, stat table and first
// payload chunk. Before the stat table kept digests, each touched file
// (a few KB in a payload chunk of 1 MiB) was stored anew: a new chunk,
// a request, for every file touched.
func TestRemoteSecondBackupRequests(t *testing.T) {
	s, bucket := storetest.NewMemStore(t)
	src := t.TempDir()
	const files = 600
	path := func(i int) string { return fmt.Sprintf("%s/d%02d/f%03d", src, i/50, i) }
	for i := range files {
		writeFile(t, path(i), randBytes(4000+i*37%9000, uint64(i)))
	}
	opt := Options{ChunkSize: 1 << 20}
	_, first := backupTree(t, s, src, opt)
	later := time.Now().Add(time.Hour)
	for i := 0; i < files; i += 100 {
		must(t, os.Chtimes(path(i), later, later))
	}
	reqs := storetest.CountRequests(bucket, nil)
	res, second := backupTree(t, s, src, opt)
	n := reqs.Take()
	t.Logf("second backup: %v", n)
	if res.Mode != ModeMetadata || res.ReadFiles != files/100 || res.ReusedFiles != files {
		t.Errorf("second backup read %d files and reused %d (mode %v), want %d read, all %d reused",
			res.ReadFiles, res.ReusedFiles, res.Mode, files/100, files)
	}
	base := map[chunk.Digest]bool{}
	for _, d := range storetest.ChunksOf(t, s, first) {
		base[d] = true
	}
	written := map[chunk.Digest]bool{}
	for _, d := range storetest.ChunksOf(t, s, second) {
		if !base[d] {
			written[d] = true
		}
	}
	x, err := s.OpenIndexFile(second, "root.ppxar.didx")
	must(t, err)
	defer x.Close()
	for i := range x.Len() {
		if d, start, end := x.Chunk(i); written[d] && end-start > 2*pxar.HeaderSize {
			t.Errorf("payload chunk %s of %d bytes is new: a touched file was stored anew", d, end-start)
		}
	}
	if got := n["put-if-absent chunk"]; got != len(written) {
		t.Errorf("%d chunks written, want %d: the new chunks of the snapshot", got, len(written))
	}
	read := len(storetest.ChunksOf(t, s, first, "root.mpxar.didx", StatTableName("root.pxar"))) + 1
	if got := n["get chunk"]; got > read {
		t.Errorf("%d chunks read, want at most %d: the base's metadata, stat table and first payload chunk", got, read)
	}
	if other := n.Chunk() - n["put-if-absent chunk"] - n["get chunk"]; other != 0 {
		t.Errorf("%d other requests on chunks (looks, touches), want none: %v", other, n)
	}
	compareTree(t, openTree(t, s, second), src, nil, nil)
}
