package restore

import (
	"errors"
	"fmt"
	"os"

	"github.com/cairnfs/cairn/internal/directio"
	"golang.org/x/sys/unix"
)

// openDirect opens f a second time with O_DIRECT, for whole-chunk writes
// that skip the page cache: a buffered write copies every byte into
// fresh page-cache pages, and allocating those pages is most of the cost
// of restoring a large image (a direct write of the same chunk runs at
// several times the speed of a buffered write of new pages). It
// returns nil where the file system refuses O_DIRECT; writes then stay
// buffered.
func openDirect(f *os.File) *os.File {
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	// Named as f: its errors name the file the user gave, not /proc.
	return os.NewFile(uintptr(fd), f.Name())
}

// directWriter writes the aligned chunks of an image through an
// O_DIRECT descriptor and everything else through the buffered one.
type directWriter struct {
	f, direct *os.File
}

// writeAt writes data at off. scratch is the caller's aligned buffer for
// data that does not start on an aligned address (a plain blob's data
// sits behind its 12-byte header).
func (w directWriter) writeAt(data []byte, off int64, scratch *[]byte) error {
	if w.direct != nil && off%directio.Align == 0 && len(data)%directio.Align == 0 {
		buf := data
		if !directio.Aligned(buf) {
			buf = directio.Buf(scratch, len(data))
			copy(buf, data)
		}
		_, err := w.direct.WriteAt(buf, off)
		if !errors.Is(err, unix.EINVAL) {
			return err // EINVAL: an alignment this device refuses; go buffered
		}
	}
	_, err := w.f.WriteAt(data, off)
	return err
}

func (w directWriter) close() error {
	if w.direct == nil {
		return nil
	}
	return w.direct.Close()
}
