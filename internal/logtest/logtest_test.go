package logtest

import (
	"sync"
	"testing"
)

// TestBufferConcurrent: lines logged from many goroutines while another
// reads all arrive whole (run with -race).
func TestBufferConcurrent(t *testing.T) {
	log, buf := Logger()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				log.Debug("line", "k", "v")
				_ = buf.String()
			}
		})
	}
	wg.Wait()
	if n := buf.Count("level=DEBUG msg=line k=v\n"); n != 800 {
		t.Fatalf("%d whole lines, want 800:\n%s", n, buf.String())
	}
}

// TestBufferSeen: the channel closes once its text is written, whether
// the line comes before or after the call, and not before.
func TestBufferSeen(t *testing.T) {
	log, buf := Logger()
	log.Info("early")
	select {
	case <-buf.Seen("msg=early"):
	default:
		t.Fatal("a line written before the call is not seen")
	}
	later := buf.Seen("msg=later")
	log.Info("other")
	select {
	case <-later:
		t.Fatal("seen before it was written")
	default:
	}
	log.Info("later")
	<-later
}
