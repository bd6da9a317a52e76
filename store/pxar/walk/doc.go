// Package walk archives a directory tree on disk into a pxar archive, as
// PBS's client does: one pass, entries sorted by name, symlinks never
// followed, one file system unless told otherwise, exclude patterns from
// the command line and from .pxarexclude files, extended attributes,
// POSIX ACLs and file capabilities collected, hard links detected by
// device and inode. Entries that vanish or cannot be read are reported
// and skipped; the walk goes on. Hooks let an incremental backup store a
// regular file itself: Reuse before the file is opened (from its lstat),
// File once it is open, Finish before the archive is closed.
//
// The archive format itself is package pxar's.
package walk
