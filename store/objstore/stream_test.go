package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cairnfs/cairn/store/objstore"
)

// PutReader in one request and as a multipart upload (thresholds lowered
// to S3's 5 MiB parts), with conditions; GetTo streams back, refusing an
// object over its limit before writing anything.
func TestPutReaderGetTo(t *testing.T) {
	b, _, _ := open(t)
	ctx := context.Background()
	defer objstore.SetPutThresholds(6<<20, 5<<20)()
	small := []byte("small object")
	big := make([]byte, 12<<20+12345)
	rng := rand.NewChaCha8([32]byte{1})
	rng.Read(big)
	for _, data := range [][]byte{small, big} {
		key := "stream/" + string(rune('a'+len(data)%26))
		info, err := b.PutReader(ctx, key, objstore.Cond{IfAbsent: true}, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("put %d bytes: %v", len(data), err)
		}
		if info.Size != int64(len(data)) || info.ETag == "" {
			t.Fatalf("put info %+v", info)
		}
		_, err = b.PutReader(ctx, key, objstore.Cond{IfAbsent: true}, bytes.NewReader(data), int64(len(data)))
		if !errors.Is(err, objstore.ErrPrecondition) {
			t.Fatalf("second IfAbsent put of %d bytes: %v", len(data), err)
		}
		var out bytes.Buffer
		gi, err := b.GetTo(ctx, key, int64(len(data)), &out)
		if err != nil || !bytes.Equal(out.Bytes(), data) || gi.Size != int64(len(data)) {
			t.Fatalf("get %d bytes: got %d, %v", len(data), out.Len(), err)
		}
		out.Reset()
		_, err = b.GetTo(ctx, key, int64(len(data))-1, &out)
		if !errors.Is(err, objstore.ErrTooLarge) || out.Len() != 0 {
			t.Fatalf("get over the limit: %v, %d bytes written", err, out.Len())
		}
	}
	if _, err := b.GetTo(ctx, "stream/none", 10, &bytes.Buffer{}); !errors.Is(err, objstore.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}
