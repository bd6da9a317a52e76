// Package walk archives a directory tree on disk into a pxar archive, as
// PBS's client does: one pass, entries sorted by name, symlinks never
// followed, one file system unless told otherwise, exclude patterns from
// the command line and from .pxarexclude files, extended attributes,
// POSIX ACLs and file capabilities collected, hard links detected by
// device and inode. Entries that vanish or cannot be read are reported
// and skipped; the walk goes on.
//
// The archive format itself is package pxar's.
package walk
