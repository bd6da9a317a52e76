// Package fsutil holds the small file helpers that the store, its index
// formats (store/index) and its object-store implementation
// (store/s3store) share: a file written atomically, a regular file opened
// without waiting on a FIFO, a directory's names, a touch that does not
// follow a symbolic link, a file's age.
package fsutil
