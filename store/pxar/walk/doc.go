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
// A helper (readahead*.go, Options.ReadAhead) walks the tree ahead of the
// walk in the same order and warms the caches it will need: directory
// listings, inodes (stat-ahead) and, where the walk reads every file, the
// next files' content (posix_fadvise WILLNEED), bounded by entry count and
// bytes; in a walk with a Reuse hook only when asked (StatAhead: there
// it measured as a cost, not a gain). It hands the walk nothing: the walk still opens and reads each
// file itself, so the archive is the same with or without it.
//
// The archive format itself is package pxar's.
package walk
