//go:build unix

package crypt

import "golang.org/x/sys/unix"

// keyMemory returns at least n bytes for key material in pages of their
// own, locked against swapping (mlock) and left out of core dumps
// (MADV_DONTDUMP), and whether they were mapped (and so must be freed
// with freeKeyMemory). Locking is best effort: an unprivileged process
// has a small RLIMIT_MEMLOCK, and a failure leaves the key usable, only
// less protected. If mapping fails it falls back to the Go heap.
func keyMemory(n int) ([]byte, bool) {
	size := (n + unix.Getpagesize() - 1) / unix.Getpagesize() * unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return make([]byte, n), false
	}
	_ = unix.Mlock(mem)
	_ = unix.Madvise(mem, unix.MADV_DONTDUMP)
	return mem, true
}

// freeKeyMemory unmaps what keyMemory mapped (the caller zeroed it).
func freeKeyMemory(mem []byte) {
	_ = unix.Munlock(mem)
	_ = unix.Munmap(mem)
}
