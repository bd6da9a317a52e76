// Package userfile reads the small files a user names on the command
// line or in the environment (key files, passphrase files, the master
// key's PEM files, a wrapped key, an S3 credentials file) without ever
// blocking on what is not a regular file.
//
// os.Open of a FIFO blocks in open(2) until a writer comes, and no
// signal handler can take it back out; a character device such as
// /dev/zero reads forever; a directory or a socket gives an error that
// does not say what was wrong. Open refuses all of these by name
// ("is a FIFO, not a regular file") and never waits:
//
//  1. stat (lstat with O_NOFOLLOW) first: what is not a regular file is
//     refused without being opened, so opening a device has no side
//     effect (a tape drive rewinds on open, a terminal may become the
//     controlling one);
//  2. open with O_NONBLOCK (and O_NOCTTY): should the path have been
//     swapped for a FIFO since the stat, the open does not wait for a
//     writer;
//  3. fstat the descriptor: what was opened is what is read, so the
//     check holds however the path changed (O_NONBLOCK changes nothing
//     for a regular file, which is all that gets past this).
//
// With the Pipe option an anonymous pipe is taken too (`<(pass show x)`,
// /dev/stdin on a pipe, mount --daemon's /dev/fd/5): its open never
// waits, only a named FIFO's does, and statfs tells the two apart
// (pipefs) before and after the open. Read and ReadAll bound what they
// read, so a file that is regular but huge is refused after limit bytes,
// not read whole.
package userfile
