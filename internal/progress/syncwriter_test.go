package progress

import (
	"bytes"
	"os"
	"sync"
	"testing"
)

// TestSyncWriter: writes from several goroutines to a stream that is no
// file are serialized (the race detector checks); a file stays itself.
func TestSyncWriter(t *testing.T) {
	var buf bytes.Buffer
	w := SyncWriter(&buf)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				w.Write([]byte("line\n"))
			}
		})
	}
	wg.Wait()
	if buf.Len() != 4*100*5 {
		t.Errorf("%d bytes written, want %d", buf.Len(), 4*100*5)
	}
	if SyncWriter(os.Stderr) != os.Stderr {
		t.Error("os.Stderr wrapped")
	}
}
