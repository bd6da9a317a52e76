package test

import (
	"context"
	"fmt"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cairnfs/cairn/internal/miniotest"
	"github.com/cairnfs/cairn/test/e2e"
)

// bucketState describes every object of bucket by key: size, ETag and
// modification time (a touch moves it), via the server's own client.
func bucketState(t *testing.T, srv *miniotest.Server, bucket string) map[string]string {
	t.Helper()
	out := make(map[string]string)
	for o := range srv.Client(t).ListObjectsIter(context.Background(), bucket, minio.ListObjectsOptions{Recursive: true}) {
		if o.Err != nil {
			t.Fatalf("listing %s: %v", bucket, o.Err)
		}
		out[o.Key] = fmt.Sprintf("%d %s %d", o.Size, o.ETag, o.LastModified.UnixNano())
	}
	return out
}

// backup --dry-run on an object store writes nothing to the bucket (no
// writer registered, no lease, no chunk put or touched: every object
// keeps its size, ETag and time), and says what the backup then does.
func TestS3BackupDryRun(t *testing.T) {
	srv := miniotest.Start(t)
	dir, bucket := initS3(t, srv, srv.Endpoint)
	e2e.DryRunThenBackup(t, dir, func() map[string]string { return bucketState(t, srv, bucket) })
}
