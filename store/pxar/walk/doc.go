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
// it measured as a cost, not a gain). A regular file it opened is held
// open for the walk with its fstat and metadata, bounded as well (at most
// 1024 descriptors, a quarter of RLIMIT_NOFILE): the walk takes the
// descriptor over and reads the file itself instead of stat'ing, opening
// and reading its metadata again (12 system calls per file of a cold
// first backup became 7). Held files the walk does not take (excluded
// meanwhile, gone from its listing, or the walk ended) are closed. The
// walk still lists every directory itself, so the archive is the same
// with or without the helper; a file removed after the helper opened it
// is stored as it was then.
//
// The archive format itself is package pxar's.
package walk
